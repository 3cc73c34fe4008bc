"""list_economies, get_series and rank_year on the real tables, checked against polars."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import polars as pl
import pytest

from armbench.arms.tool_source import in_process_tools
from armbench.domains import DOMAINS
from armbench.domains.worldbank import TABLES
from armbench.domains.worldbank.tools import GetSeries, ListEconomies, RankYear
from armbench.engine.agent import run_episode
from armbench.grading.strict import grade
from armbench.questions import load_sets
from armbench.tools.base import ArmTools
from tests.support.models import caller

COUNTRIES = TABLES.load("wb_countries")
VALUES = TABLES.load("wb_values")
ECONOMIES = COUNTRIES.filter(~pl.col("is_aggregate"))


def call(tool: type, arguments: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(tool().invoke(arguments)).result


def error(tool: type, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(tool, arguments)
    assert "error" in result, result
    return result["error"]


def year_values(indicator: str, year: int) -> dict[str, float]:
    rows = VALUES.filter((pl.col("indicator") == indicator) & (pl.col("year") == year))
    return dict(zip(rows["country"], rows["value"]))


def codes_where(condition: pl.Expr) -> list[str]:
    return ECONOMIES.filter(condition)["code"].to_list()


def test_the_domain_registers_three_tools_with_json_schemas():
    tools = [cls() for cls in DOMAINS["worldbank"].tool_classes()]
    assert [t.name for t in tools] == ["list_economies", "get_series", "rank_year"]
    for tool in tools:
        json.dumps(tool.schema())
        assert tool.description.count("Example:") == 1


# ---- list_economies ---------------------------------------------------------------------------


def test_list_economies_filters_by_code_or_name_and_leaves_out_aggregates():
    by_code = call(ListEconomies, {"region": "SSF", "income_group": "LIC"})
    by_name = call(ListEconomies, {"region": "sub-saharan africa", "income_group": "Low income"})
    expected = codes_where(
        (pl.col("region_code") == "SSF") & (pl.col("income_level_code") == "LIC")
    )
    assert [r["code"] for r in by_code["rows"]] == [r["code"] for r in by_name["rows"]] == expected
    assert by_code["matched"] == len(expected)
    everything = call(ListEconomies, {})
    assert everything["matched"] == ECONOMIES.height == 217
    with_aggregates = call(ListEconomies, {"include_aggregates": True})
    assert with_aggregates["matched"] == COUNTRIES.height


def test_income_unions_and_lending_types():
    middle = call(ListEconomies, {"income_group": "MIC"})
    assert {r["code"] for r in middle["rows"]} == set(
        codes_where(pl.col("income_level_code").is_in(["LMC", "UMC"]))
    )
    blend = call(ListEconomies, {"lending_type": "Blend"})
    assert {r["lending_type"] for r in blend["rows"]} == {"Blend"}


def test_an_unknown_group_lists_the_valid_choices():
    problem = error(ListEconomies, {"region": "Europe"})
    assert problem["type"] == "unknown_region"
    assert "ECS: Europe & Central Asia" in problem["valid_choices"]


# ---- get_series -------------------------------------------------------------------------------


def test_get_series_returns_every_value_and_reports_missing_years():
    result = call(GetSeries, {"indicator": "NY.GDP.MKTP.KD.ZG", "economies": ["Greece", "FR"],
                              "start_year": 1960, "end_year": 2025})
    expected = VALUES.filter((pl.col("indicator") == "NY.GDP.MKTP.KD.ZG")
                             & pl.col("country").is_in(["GRC", "FRA"]))
    assert result["matched"] == expected.height
    got = {(r["economy"], r["year"]): r["value"] for r in result["rows"]}
    assert got == dict(zip(zip(expected["country"], expected["year"]), expected["value"]))
    assert [r["economy"] for r in result["rows"]][:1] == ["GRC"]  # economies in the order given
    assert {m["economy"]: m["years"] for m in result["missing"]} == {
        "GRC": ["1960"], "FRA": ["1960"]
    }


def test_value_filter_keeps_passing_years_and_gaps_stay_reported():
    result = call(GetSeries, {"indicator": "EN.ATM.CO2E.PC", "economies": ["USA"],
                              "start_year": 2010, "end_year": 2020,
                              "value_filter": {"op": "gte", "value": 17}})
    usa = VALUES.filter((pl.col("indicator") == "EN.ATM.CO2E.PC") & (pl.col("country") == "USA")
                        & pl.col("year").is_between(2010, 2020) & (pl.col("value") >= 17))
    assert [r["year"] for r in result["rows"]] == usa["year"].to_list()
    assert result["missing"] == [{"economy": "USA", "name": "United States",
                                  "years": ["2015-2020"]}]


@pytest.mark.parametrize(
    ("arguments", "kind", "hint"),
    [
        ({"indicator": "infant mortality"}, "unknown_indicator", "SP.DYN.IMRT.IN"),
        ({"economies": ["Turkey"]}, "unknown_economy", "TUR: Turkiye"),
        ({"economies": ["Korea"]}, "unknown_economy", "KOR: Korea, Rep."),
        ({"start_year": 1900}, "bad_year", None),
        ({"start_year": 2020, "end_year": 2010}, "bad_years", None),
        ({"value_filter": {"op": "below", "value": 0}}, "unknown_op", None),
        ({"economies": []}, "invalid_arguments", None),
        ({"economies": ["KEN"] * 41}, "invalid_arguments", None),
        ({"economies": ["KEN", "UGA", "TZA", "RWA", "BDI", "ETH", "SOM", "SSD", "SDN", "COD",
                        "COG", "GAB", "CMR"], "start_year": 1960, "end_year": 2025},
         "too_many_values", "rank_year"),
    ],
)
def test_get_series_mistakes_come_back_with_what_to_do(arguments, kind, hint):
    base = {"indicator": "SP.POP.TOTL", "economies": ["KEN"], "start_year": 2000,
            "end_year": 2001}
    problem = error(GetSeries, {**base, **arguments})
    assert problem["type"] == kind
    if hint:
        assert hint in json.dumps(problem)


# ---- rank_year --------------------------------------------------------------------------------


def test_rank_year_ranks_a_region_and_lists_economies_without_a_value():
    result = call(RankYear, {"indicator": "SP.DYN.IMRT.IN", "year": 2022, "region": "ECS",
                             "limit": 100})
    region = codes_where(pl.col("region_code") == "ECS")
    values = year_values("SP.DYN.IMRT.IN", 2022)
    assert result["considered"] == len(region)
    assert {m["economy"] for m in result["missing"]} == {c for c in region if c not in values}
    assert result["ranked"] == len(result["rows"]) == len([c for c in region if c in values])
    for row in result["rows"]:
        assert row["value"] == values[row["economy"]]
        assert row["rank"] == 1 + sum(values[c] > row["value"] for c in region if c in values)
    assert not result["truncated"]


def test_a_limit_never_splits_a_tie_and_start_rank_picks_a_place():
    large = ["RUS", "DEU", "FRA", "GBR", "ITA", "ESP", "POL", "ROU", "NLD"]
    top = call(RankYear, {"indicator": "SP.DYN.IMRT.IN", "year": 2022, "economies": large,
                          "limit": 5})
    assert [r["rank"] for r in top["rows"]] == [1, 2, 3, 4, 5, 5] and top["truncated"]
    fifth = call(RankYear, {"indicator": "SP.DYN.IMRT.IN", "year": 2022, "economies": large,
                            "start_rank": 5, "limit": 1})
    assert {(r["rank"], r["economy"]) for r in fifth["rows"]} == {(5, "FRA"), (5, "NLD")}


def test_ascending_order_value_filter_and_aggregates():
    low = call(RankYear, {"indicator": "SP.DYN.LE00.IN", "year": 2022, "order": "asc",
                          "limit": 3, "value_filter": {"op": "gt", "value": 50}})
    assert [r["rank"] for r in low["rows"]] == [1, 2, 3]
    assert all(r["value"] > 50 for r in low["rows"])
    assert low["rows"][0]["value"] == min(
        v for c, v in year_values("SP.DYN.LE00.IN", 2022).items()
        if v > 50 and c in set(ECONOMIES["code"])
    )
    named = call(RankYear, {"indicator": "SP.POP.TOTL", "year": 2022,
                            "economies": ["WLD", "India"]})
    assert [r["economy"] for r in named["rows"]] == ["WLD", "IND"]
    everyone = call(RankYear, {"indicator": "SP.POP.TOTL", "year": 2022, "limit": 1,
                               "include_aggregates": True})
    assert everyone["rows"][0]["economy"] == "WLD"


def test_descriptions_examples_hold():
    north_america = call(ListEconomies, {"region": "NAC"})
    assert north_america["matched"] == 3 and north_america["rows"][0]["code"] == "BMU"
    series = call(GetSeries, {"indicator": "SP.POP.TOTL", "economies": ["CAN", "Mexico"],
                              "start_year": 2019, "end_year": 2020})
    assert series["matched"] == 4 and series["missing"] == []
    ranked = call(RankYear, {"indicator": "NY.GDP.PCAP.CD", "year": 2020,
                             "region": "North America", "limit": 2})
    assert (ranked["considered"], ranked["ranked"], ranked["truncated"]) == (3, 3, True)
    assert ranked["rows"][0]["economy"] == "BMU"


def test_no_description_names_a_reference_answer():
    descriptions = " ".join(cls.description for cls in DOMAINS["worldbank"].tool_classes())
    names = {item for qs in load_sets(["worldbank"]) for q in qs.questions for item in q.answer
             if not item.isdigit()}
    assert names and not [name for name in names if name in descriptions]


# ---- the oracle through the agent loop --------------------------------------------------------


async def test_the_oracle_answers_every_worldbank_question_with_the_tools():
    arm = ArmTools("tooled", in_process_tools("worldbank"))  # the typed tools alone: the oracle needs no more
    for question_set in load_sets(["worldbank"]):
        for question in question_set.questions:
            episode = await run_episode(question, arm, caller("scripted/oracle"))
            verdict = grade(episode.answer, question.answer, question.separator,
                            stop_reason=episode.stop_reason)
            assert verdict.correct, (question.id, episode.answer)
            assert episode.actions == len(question.solutions["tooled"].calls)
