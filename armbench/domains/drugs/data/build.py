"""`../shared/data/drugs/` -> four tables (run by `bench data build`).

- drug_applications, drug_products, drug_submissions: applications.csv, products.csv and
  submissions.csv column for column, in their order (by application; the site reads an
  application's rows as one slice); appl_no (and product_no) stay zero-padded text,
  submission_status_date is a Date with the source's 1900-01-01 placeholder null, orphan_flag a bool.
- drug_approvals: one row per application's original approval (`original_approvals`), with the
  application's sponsor and its products' names, ingredients, forms and statuses joined: the
  table `drug_query` reads, and the site's monthly reports list.
therapeutic_equivalence.csv is not built: no page, tool or question reads TE codes.
Nothing calls this at run time: the Parquet files are committed.
"""
from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from armbench.domains.drugs import TABLES

PLACEHOLDER_DATE = date(1900, 1, 1)
SEPARATOR = " | "  # between several products' values: names, ingredients and form;route hold ";" already


def read(shared_data: Path, name: str, **text_columns: type[pl.DataType]) -> pl.DataFrame:
    return pl.read_csv(shared_data / "drugs" / f"{name}.csv", infer_schema_length=None,
                       schema_overrides={"appl_no": pl.Utf8, **text_columns})


def product_table(shared_data: Path) -> pl.DataFrame:
    return read(shared_data, "products", product_no=pl.Utf8).sort("appl_no", "product_no", maintain_order=True)


def submission_table(shared_data: Path) -> pl.DataFrame:
    dated = read(shared_data, "submissions").sort("appl_no", maintain_order=True).with_columns(
        pl.col("submission_status_date").str.to_date())
    return dated.with_columns(
        pl.when(pl.col("submission_status_date") != PLACEHOLDER_DATE).then(pl.col("submission_status_date"))
        .alias("submission_status_date"))


def original_approvals(submissions: pl.DataFrame) -> pl.DataFrame:
    """Each application's original approval: its earliest ORIG submission with status AP. When two
    were approved that same day (20 applications), the one that carries a chemical type (a class
    "Type ..."), then the lower submission number: Rydapt's ORIG-2, its Type 1, not ORIG-1's "Efficacy"."""
    typed = pl.col("submission_class_description").str.starts_with("Type ").fill_null(False)
    approved = submissions.filter((pl.col("submission_type") == "ORIG") & (pl.col("submission_status") == "AP"))
    return (approved.sort(["appl_no", "submission_status_date", typed, "submission_no"],
                          descending=[False, False, True, False], nulls_last=True, maintain_order=True)
            .unique("appl_no", keep="first", maintain_order=True))


def joined(column: str) -> pl.Expr:
    """The distinct values of an application's products, in product order."""
    return pl.col(column).drop_nulls().unique(maintain_order=True).str.join(SEPARATOR)


def product_summary(products: pl.DataFrame) -> pl.DataFrame:
    """One row per application: its products' names, ingredients, forms and statuses, and their count."""
    return products.sort("appl_no", "product_no").group_by("appl_no", maintain_order=True).agg(
        joined("drug_name"), joined("active_ingredient"), joined("form_route"), joined("marketing_status"),
        pl.len().cast(pl.Int64).alias("products"))


def approvals(applications: pl.DataFrame, products: pl.DataFrame, submissions: pl.DataFrame) -> pl.DataFrame:
    """`original_approvals` with the application's type and sponsor and its products' summary; an
    application that Applications.txt lacks has no type or sponsor, one without products no names."""
    first = original_approvals(submissions).select(
        "appl_no", pl.col("submission_status_date").alias("approval_date"), "submission_no",
        pl.col("submission_class_description").alias("chemical_type"), "review_priority",
        pl.col("orphan_flag").alias("orphan"))
    return (first.join(applications.select("appl_no", "appl_type", "sponsor_name"), on="appl_no", how="left")
            .join(product_summary(products), on="appl_no", how="left")
            .select("appl_no", "appl_type", "sponsor_name", "drug_name", "active_ingredient", "form_route",
                    "marketing_status", "products", "approval_date", "submission_no", "chemical_type",
                    "review_priority", "orphan")
            .sort("appl_no"))


def build(shared_data: Path) -> list[Path]:
    applications = read(shared_data, "applications")
    products = product_table(shared_data)
    history = submission_table(shared_data)
    return [TABLES.write(applications, "drug_applications"),
            TABLES.write(products, "drug_products"),
            TABLES.write(history, "drug_submissions"),
            TABLES.write(approvals(applications, products, history), "drug_approvals")]
