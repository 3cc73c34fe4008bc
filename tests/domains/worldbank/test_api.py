"""The World Bank replica's behaviour: values from the data, parameters, errors, XML, no 500."""
from __future__ import annotations

import logging
import xml.etree.ElementTree as ET

import polars as pl
import pytest
from starlette.testclient import TestClient

from armbench.domains.worldbank import TABLES
from armbench.domains.worldbank.api.app import create_app

INVALID = [{"message": [{"id": "120", "key": "Invalid value",
                         "value": "The provided parameter value is not valid"}]}]
WB = "{http://www.worldbank.org}"
VALUES = TABLES.load("wb_values")


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def get_json(client, path: str, **params):
    response = client.get(path, params={"format": "json", **params})
    assert response.status_code == 200
    return response.json()


def observed(indicator: str) -> dict[tuple[str, int], float]:
    rows = VALUES.filter(pl.col("indicator") == indicator)
    return dict(zip(zip(rows["country"], rows["year"]), rows["value"]))


def test_paging_through_every_page_gives_every_value_and_a_null_for_every_gap(client):
    seen: dict[tuple[str, int], float | None] = {}
    page, pages = 1, None
    while pages is None or page <= pages:
        head, rows = get_json(client, "/v2/country/all/indicator/SP.DYN.IMRT.IN",
                              per_page=4000, page=page)
        pages = head["pages"]
        seen.update({(r["countryiso3code"], int(r["date"])): r["value"] for r in rows})
        page += 1
    assert len(seen) == head["total"] == 265 * 66
    expected = observed("SP.DYN.IMRT.IN")
    assert {key: value for key, value in seen.items() if value is not None} == expected
    assert sum(value is None for value in seen.values()) == len(seen) - len(expected)


def test_the_infant_mortality_tie_and_integral_values(client):
    _, rows = get_json(client, "/v2/country/FRA;NLD/indicator/SP.DYN.IMRT.IN", date="2022")
    assert [(r["country"]["value"], r["value"]) for r in rows] == [
        ("France", 3.4), ("Netherlands", 3.4)
    ]
    _, rows = get_json(client, "/v2/country/FRA/indicator/SP.POP.TOTL", date="2020")
    assert rows[0]["value"] == int(observed("SP.POP.TOTL")[("FRA", 2020)])
    assert isinstance(rows[0]["value"], int)


def test_a_missing_year_is_null_not_dropped(client):
    head, rows = get_json(client, "/v2/country/GRC/indicator/NY.GDP.MKTP.KD.ZG",
                          date="1960:1962")
    assert head["total"] == 3
    assert [(r["date"], r["value"] is None) for r in rows] == [
        ("1962", False), ("1961", False), ("1960", True)
    ]


def test_mrv_takes_the_latest_years_with_data_and_mrnev_each_economys_own(client):
    _, rows = get_json(client, "/v2/country/USA/indicator/EN.ATM.CO2E.PC", mrv=2)
    assert [r["date"] for r in rows] == ["2014", "2013"]
    _, rows = get_json(client, "/v2/country/FRA;SSD/indicator/SE.XPD.TOTL.GD.ZS", mrnev=1)
    assert all(r["value"] is not None for r in rows) and len(rows) == 2


def test_several_indicators_go_one_after_another_and_mark_null_rows(client):
    head, rows = get_json(client, "/v2/country/JPN;USA/indicator/SP.POP.TOTL;EN.ATM.CO2E.PC",
                          source=2, date="2014:2015", footnote="y")
    assert head["sourceid"] is None and head["total"] == 8
    assert [(r["indicator"]["id"], r["countryiso3code"], r["date"]) for r in rows][:3] == [
        ("SP.POP.TOTL", "JPN", "2015"), ("SP.POP.TOTL", "JPN", "2014"),
        ("SP.POP.TOTL", "USA", "2015"),
    ]
    null_row = next(r for r in rows if r["value"] is None)
    assert list(null_row) == ["indicator", "country", "countryiso3code", "date", "value",
                              "scale", "unit", "obs_status", "decimal", "footnote"]
    assert "scale" not in next(r for r in rows if r["value"] is not None)


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v2/country/USA/indicator/NO.SUCH.IND", {}),
        ("/v2/country/USA/indicator/SP.POP.TOTL", {"date": "abc"}),
        ("/v2/country/USA/indicator/SP.POP.TOTL", {"date": "2020:2010"}),
        ("/v2/country/USA/indicator/SP.POP.TOTL", {"page": "0"}),
        ("/v2/country/USA/indicator/SP.POP.TOTL", {"per_page": "1000000000"}),
        ("/v2/country/USA/indicator/SP.POP.TOTL", {"mrv": "-1"}),
        ("/v2/country/XYZ/indicator/SP.POP.TOTL", {}),
        ("/v2/country/AFR/indicator/SP.POP.TOTL", {}),  # an aggregate without data
        ("/v2/country/XYZ", {}),
        ("/v2/country", {"incomelevel": "RICH"}),
        ("/v2/country", {"region": "EUU"}),  # membership not in the data
        ("/v2/indicator/NO.SUCH.IND", {}),
        ("/v2/region/NOPE", {}),
    ],
)
def test_bad_ids_and_values_get_the_real_invalid_value_message(client, path, params):
    response = client.get(path, params={"format": "json", **params})
    assert (response.status_code, response.json()) == (200, INVALID)


def test_errors_in_xml_by_default():
    response = TestClient(create_app()).get("/v2/country/USA/indicator/SP.POP.TOTL?page=0")
    root = ET.fromstring(response.content)
    assert root.tag == f"{WB}error"
    message = root.find(f"{WB}message")
    assert (message.get("id"), message.get("key")) == ("120", "Invalid value")


def test_an_unknown_source_is_a_400_page_and_an_unknown_endpoint_a_404(client):
    bad_source = client.get("/v2/country/USA/indicator/SP.POP.TOTL?source=11&format=json")
    assert bad_source.status_code == 400 and "Request Error" in bad_source.text
    assert client.get("/v2/topics").status_code == 404
    assert client.get("/docs").status_code == 404


def test_paths_and_parameter_names_are_case_insensitive(client):
    lower = get_json(client, "/v2/country", incomelevel="LIC", per_page=100)
    mixed = client.get("/V2/Countries?incomeLevel=lic&FORMAT=JSON&Per_Page=100").json()
    assert mixed == lower and lower[0]["total"] == 25
    assert get_json(client, "/v2/en/country/us")[1][0]["id"] == "USA"


def test_filters_combine_and_group_unions_resolve(client):
    countries = TABLES.load("wb_countries")
    expected = countries.filter(
        (pl.col("region_code") == "SSF") & pl.col("income_level_code").is_in(["LIC", "LMC"])
        & (pl.col("lending_type_code") == "IDX")
    )["code"].to_list()
    head, rows = get_json(client, "/v2/country", region="SSF", incomelevel="LIC;LMC",
                          lendingtype="IDX")
    assert [r["id"] for r in rows] == expected and head["total"] == len(expected) > 10
    middle = get_json(client, "/v2/country", incomelevel="MIC", per_page=500)[0]["total"]
    assert middle == 104


def test_a_query_that_matches_nothing_gets_the_empty_data_body(client):
    assert get_json(client, "/v2/country/USA/indicator/SP.POP.TOTL", date="1900") == [
        {"page": 0, "pages": 0, "per_page": 0, "total": 0, "sourceid": None,
         "lastupdated": None},
        None,
    ]
    head, rows = get_json(client, "/v2/country", page=99)
    assert rows == [] and head["page"] == 99


def test_an_unserved_language_gets_message_150(client):
    body = get_json(client, "/v2/fr/country")
    assert body[0]["message"][0]["id"] == "150"


def test_xml_is_the_default_and_carries_the_same_data(client):
    root = ET.fromstring(client.get("/v2/country/FRA;NLD/indicator/SP.DYN.IMRT.IN?date=2022")
                         .content)
    assert (root.tag, root.get("total"), root.get("sourceid")) == (f"{WB}data", "2", "2")
    values = [(d.find(f"{WB}countryiso3code").text, d.find(f"{WB}value").text) for d in root]
    assert values == [("FRA", "3.4"), ("NLD", "3.4")]
    countries = ET.fromstring(client.get("/v2/country/USA").content)
    usa = countries.find(f"{WB}country")
    assert usa.get("id") == "USA" and usa.find(f"{WB}region").get("id") == "NAC"


def test_the_advanced_source_api_serves_the_same_values(client):
    concepts = get_json(client, "/v2/en/sources/2/concepts")["source"][0]["concept"]
    assert [c["id"] for c in concepts] == ["Country", "Series", "Time"]
    body = get_json(client, "/v2/en/sources/2/series/SP.DYN.IMRT.IN/country/FRA;NLD/time/YR2022")
    assert {(d["variable"][0]["id"], d["value"]) for d in body["source"]["data"]} == {
        ("FRA", 3.4), ("NLD", 3.4)
    }
    years = get_json(client, "/v2/sources/2/time/all", per_page=100)["source"][0]["concept"][0]
    assert years["variable"][0] == {"id": "YR1960", "value": "1960"}


WEIRD = [
    "/v2/country/%00", "/v2/country/;;", "/v2/country/all/indicator/all",
    "/v2/country/all/indicator/", "/v2/countries/USA/indicators/SP.POP.TOTL/extra",
    "/v2/sources/2/time", "/v2/sources/3/concepts", "/v2/sources/2/country/all/series",
    "/v2/sources/2/country/USA/country/FRA", "/v2/sources/2/series/XX/time/all",
    "/v2/country/USA/indicator/SP.POP.TOTL?page=99999999999999999999999",
    "/v2/country/USA/indicator/SP.POP.TOTL?per_page=%C2%B2", "/v2/country?region=",
    "/v2/country/USA/indicator/SP.POP.TOTL?date=" + "9" * 400, "/v2/" + "x" * 3000,
    "/v2/country/USA?format=jsonp", "/v2/%E2%9C%93", "/v2/ES/country", "/v2/en",
]


@pytest.mark.parametrize("path", WEIRD)
def test_odd_requests_never_fail_inside_the_replica(client, caplog, path):
    with caplog.at_level(logging.ERROR, logger="armbench.domains.worldbank.api.routes"):
        response = client.get(path)
    assert response.status_code in (200, 400, 404)
    assert not caplog.records, caplog.text
