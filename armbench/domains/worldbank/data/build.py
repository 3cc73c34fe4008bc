"""`../shared/data/worldbank` -> the `wb_*` Parquet tables (see the World Bank section of DATA.md).

countries.csv names each economy's region, income group and lending type but not their codes, so
the codes come from the captured `/v2/region`, `/v2/incomeLevel` and `/v2/lendingType` responses
(joined on the current names) and the admin region follows the rule those captures obey.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from armbench.domains.worldbank import TABLES

AGGREGATES = "Aggregates"
# Developing-only counterpart of each geographic region: the captured /v2/country gives every
# low and middle income economy this admin region, and high income / unclassified ones none.
ADMIN_REGION_OF = {
    "EAS": "EAP",
    "ECS": "ECA",
    "LCN": "LAC",
    "MEA": "MNA",
    "SAS": "SAS",
    "SSF": "SSA",
}
DEVELOPING_INCOME = ("LIC", "LMC", "UMC")
SAMPLES = "api_samples"


def captured(source: Path, endpoint: str) -> list[dict]:
    return json.loads((source / SAMPLES / f"r_worldbank_v2_{endpoint}.data.json").read_text())


def classification(source: Path, endpoint: str) -> pl.DataFrame:
    """The captured income level or lending type list: code, iso2_code, name."""
    return pl.DataFrame(
        [{"code": row["id"], "iso2_code": row["iso2code"], "name": row["value"]}
         for row in captured(source, endpoint)]
    )


def regions(source: Path, countries: pl.DataFrame) -> pl.DataFrame:
    """The captured region list with each region's current name (the capture predates the MEA
    rename to "Middle East, North Africa, Afghanistan & Pakistan")."""
    current = dict(zip(countries["code"], countries["name"]))
    return pl.DataFrame(
        [{"code": row["code"], "id": row["id"], "iso2_code": row["iso2code"],
          "name": current.get(row["code"], row["name"])}
         for row in captured(source, "region")]
    )


def read_countries(source: Path) -> pl.DataFrame:
    raw = pl.read_csv(source / "countries.csv", infer_schema_length=0)
    return raw.rename({"iso3c": "code", "iso2c": "iso2_code", "country": "name"})


def code_of(names: pl.DataFrame, column: str, code_column: str) -> pl.DataFrame:
    """name -> code lookup for a classification, matched on the name with spaces stripped."""
    return names.select(
        pl.col("name").str.strip_chars().alias(column), pl.col("code").alias(code_column)
    )


def build_countries(raw: pl.DataFrame, region_table: pl.DataFrame,
                    incomes: pl.DataFrame, lendings: pl.DataFrame) -> pl.DataFrame:
    region_names = region_table.filter(pl.col("id") != "")
    frame = (
        raw.join(code_of(region_names, "region", "region_code"), on="region", how="left")
        .join(code_of(incomes, "income", "income_level_code"), on="income", how="left")
        .join(code_of(lendings, "lending", "lending_type_code"), on="lending", how="left")
    )
    is_aggregate = pl.col("region") == AGGREGATES
    full_name = dict(zip(region_table["code"], region_table["name"]))
    admin_code = (
        pl.when(pl.col("income_level_code").is_in(DEVELOPING_INCOME))
        .then(pl.col("region_code").replace_strict(ADMIN_REGION_OF, default=None))
    )
    frame = frame.with_columns(
        is_aggregate.alias("is_aggregate"),
        pl.when(is_aggregate).then(pl.lit("NA")).otherwise(pl.col("region_code"))
        .alias("region_code"),
        pl.when(is_aggregate).then(pl.lit(AGGREGATES))
        .otherwise(pl.col("region_code").replace_strict(full_name, default=None)).alias("region"),
        pl.when(is_aggregate).then(pl.lit("NA")).otherwise(pl.col("income_level_code"))
        .alias("income_level_code"),
        pl.col("income").alias("income_level"),
        pl.when(is_aggregate).then(pl.lit("")).otherwise(pl.col("lending_type_code"))
        .alias("lending_type_code"),
        pl.col("lending").alias("lending_type"),
        admin_code.alias("admin_region_code"),
        admin_code.replace_strict(full_name, default=None).alias("admin_region"),
        pl.col("capital").alias("capital_city"),
    )
    missing = frame.filter(~pl.col("is_aggregate") & pl.col("region_code").is_null()
                           | pl.col("income_level_code").is_null()
                           | pl.col("lending_type_code").is_null())
    if missing.height:
        raise ValueError(f"countries without a classification code: {missing['code'].to_list()}")
    return frame.select(
        "code", "iso2_code", "name", "is_aggregate", "region_code", "region",
        "admin_region_code", "admin_region", "income_level_code", "income_level",
        "lending_type_code", "lending_type", "capital_city", "longitude", "latitude",
    ).sort("code")


def build_indicators(source: Path) -> pl.DataFrame:
    raw = pl.read_csv(source / "indicators.csv", infer_schema_length=0)
    return raw.select(
        pl.col("indicator").alias("code"),
        "name",
        pl.col("description").alias("source_note"),
        pl.col("sourceOrganization").fill_null("").alias("source_organization"),
        pl.col("sourceDatabase").alias("source_database"),
    ).sort("code")


def build_values(source: Path, indicators: list[str]) -> pl.DataFrame:
    frames = [
        pl.read_csv(source / "values" / f"{code}.csv", schema_overrides={"Value": pl.Float64})
        .select(
            pl.lit(code).alias("indicator"),
            pl.col("Country Code").alias("country"),
            pl.col("Year").cast(pl.Int32).alias("year"),
            pl.col("Value").alias("value"),
        )
        for code in indicators
    ]
    return pl.concat(frames).sort("indicator", "country", "year")


def build(shared_data: Path) -> list[Path]:
    source = shared_data / "worldbank"
    raw = read_countries(source)
    region_table = regions(source, raw)
    incomes = classification(source, "incomeLevel")
    lendings = classification(source, "lendingType")
    countries = build_countries(raw, region_table, incomes, lendings)
    indicators = build_indicators(source)
    values = build_values(source, indicators["code"].to_list())
    unknown = set(values["country"].unique()) - set(countries["code"])
    if unknown:
        raise ValueError(f"values for economies missing from countries.csv: {sorted(unknown)}")
    return [
        TABLES.write(countries, "wb_countries"),
        TABLES.write(region_table, "wb_regions"),
        TABLES.write(incomes, "wb_income_levels"),
        TABLES.write(lendings, "wb_lending_types"),
        TABLES.write(indicators, "wb_indicators"),
        TABLES.write(values, "wb_values"),
    ]
