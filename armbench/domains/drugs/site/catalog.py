"""Every page's content, prepared once per process: a request looks a key up and renders at most
one application's rows.

An application's products and submissions, and a month's report, are slices of tables sorted by
application or date, rendered as HTML rows (`fields.row`) when the page is asked for: 23,200
application pages and 890 months rendered up front would cost seconds at start and tens of MB for
pages few requests see.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache

import polars as pl
from markupsafe import Markup

from armbench.domains.drugs import TABLES
from armbench.domains.drugs.data.build import product_summary
from armbench.domains.drugs.site.fields import (
    ACTIONS,
    SEARCH_COLUMNS,
    application_href,
    application_link,
    cell,
    flag,
    row,
    submission_label,
)

APPLICATION = ["appl_no", "appl_type", "sponsor_name"]
ACTION_COLUMNS = ["appl_no", "appl_type", "sponsor_name", "drug_name", "active_ingredient", "date", "submission_no",
                  "classification", "review_priority", "status"]


@dataclass(frozen=True)
class Application:
    appl_no: str
    appl_type: str | None  # None: Applications.txt lacks it (so does its company)
    sponsor: str | None
    title: str  # its products' drug names, " | " between several; "" without products
    approved: date | None  # its original approval (None: none, or its date is unknown)
    approval: str  # that approval's submission ("ORIG-1"); "" when it has none
    products: slice  # its rows of Catalog.products
    submissions: slice  # its rows of Catalog.submissions


@dataclass(frozen=True)
class Search:
    """One row per application, drug name and active ingredient (`frame`: the sort columns, `row`
    and the lower-cased texts searched; `cells`: each row's result cells and `href`)."""

    frame: pl.DataFrame
    cells: list[dict[str, str]]


@dataclass(frozen=True)
class Catalog:
    applications: pl.DataFrame  # `application_table`
    application_rows: dict[str, int]  # zero-padded application number -> its row of `applications`
    products: pl.DataFrame  # by application, then product number
    submissions: pl.DataFrame  # by application, each one's in `history_order`
    search: Search
    actions: pl.DataFrame  # the monthly reports' rows (`monthly_actions`), by date
    months: dict[tuple[int, int], slice]  # (year, month) with an action -> its rows of `actions`
    undated: pl.DataFrame  # the original approvals without a date, in no month (`undated_approvals`)
    latest_action: date

    def report_rows(self, month: tuple[int, int]) -> list[Markup]:
        """A month's report, by date then drug name ([] for a month without actions)."""
        return action_rows(self.actions[self.months.get(month, slice(0, 0))])

    def undated_rows(self) -> list[Markup]:
        """The original approvals without a date, in no month's report, as a report shows them."""
        return action_rows(self.undated)

    def application(self, appl_no: str) -> Application | None:
        index = self.application_rows.get(appl_no)
        if index is None:
            return None
        r = self.applications.row(index, named=True)
        return Application(
            appl_no=appl_no, appl_type=r["appl_type"], sponsor=r["sponsor_name"], title=r["drug_name"] or "",
            approved=r["approval_date"],
            approval=submission_label("ORIG", r["submission_no"]) if r["submission_no"] is not None else "",
            products=slice(r["products_start"], r["products_start"] + r["products_count"]),
            submissions=slice(r["submissions_start"], r["submissions_start"] + r["submissions_count"]),
        )

    def product_rows(self, application: Application) -> list[Markup]:
        return [row(cell(p["product_no"]), [
            cell(p["drug_name"]), cell(p["active_ingredient"]), cell(p["strength"]), cell(p["form_route"]),
            cell(p["marketing_status"]), flag(p["reference_drug"]), flag(p["reference_standard"]),
        ]) for p in self.products[application.products].iter_rows(named=True)]

    def submission_rows(self, application: Application) -> list[Markup]:
        """Its submissions, in `history_order`."""
        return [row(cell(s["submission_status_date"]), [
            submission_label(s["submission_type"], s["submission_no"]), ACTIONS.get(s["submission_status"], ""),
            cell(s["submission_class_description"]), cell(s["review_priority"]),
            "Orphan" if s["orphan_flag"] else "",
        ]) for s in self.submissions[application.submissions].iter_rows(named=True)]


def history_order(submissions: pl.DataFrame) -> pl.DataFrame:
    """By application, each one's submissions as its page lists them: newest action first (undated
    last), ORIG before SUPPL, higher numbers first. Sorted once here, not at each page view."""
    return submissions.sort(["appl_no", "submission_status_date", "submission_type", "submission_no"],
                            descending=[False, True, False, True], nulls_last=True, maintain_order=True)


def spans(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """Each application's rows of `frame` (sorted by application): `<name>_start`, `<name>_count`."""
    return frame.with_row_index("index").group_by("appl_no", maintain_order=True).agg(
        pl.col("index").first().alias(f"{name}_start"), pl.len().alias(f"{name}_count"))


def application_table(applications: pl.DataFrame, products: pl.DataFrame, submissions: pl.DataFrame,
                      approvals: pl.DataFrame, summary: pl.DataFrame) -> pl.DataFrame:
    """One row per application number the three files name (1,753 are in Submissions.txt or
    Products.txt only, DATA.md), with where its products and submissions start."""
    numbers = pl.concat([frame.select("appl_no") for frame in (applications, products, submissions)]).unique()
    return (numbers.join(applications.select(APPLICATION), on="appl_no", how="left")
            .join(summary.select("appl_no", "drug_name"), on="appl_no", how="left")
            .join(approvals.select("appl_no", "approval_date", "submission_no"), on="appl_no", how="left")
            .join(spans(products, "products"), on="appl_no", how="left")
            .join(spans(submissions, "submissions"), on="appl_no", how="left")
            .with_columns(pl.col("^(products|submissions)_(start|count)$").fill_null(0))
            .sort("appl_no"))


def action_rows(actions: pl.DataFrame) -> list[Markup]:
    """Report rows: date (empty when unknown), drug, submission (linking the application), ingredients,
    company, classification, review priority and action."""
    return [row(cell(a["date"]), [
        cell(a["drug_name"]),
        application_link(a["appl_type"], a["appl_no"], f" {submission_label('ORIG', a['submission_no'])}"),
        cell(a["active_ingredient"]), cell(a["sponsor_name"]), cell(a["classification"]),
        cell(a["review_priority"]), ACTIONS[a["status"]],
    ]) for a in actions.iter_rows(named=True)]


def monthly_actions(applications: pl.DataFrame, submissions: pl.DataFrame, approvals: pl.DataFrame,
                    summary: pl.DataFrame) -> pl.DataFrame:
    """The reports' rows: each application's original approval (as drug_approvals has it) and every
    original tentative approval, by date, then drug name; actions without a date are in no month
    (the original approvals among them: `undated_approvals`)."""
    approved = approval_actions(approvals)
    tentative = (submissions.filter((pl.col("submission_type") == "ORIG") & (pl.col("submission_status") == "TA"))
                 .join(applications.select(APPLICATION), on="appl_no", how="left")
                 .join(summary, on="appl_no", how="left")
                 .with_columns(pl.col("submission_status_date").alias("date"),
                               pl.col("submission_status").alias("status"),
                               pl.col("submission_class_description").alias("classification"))
                 .select(ACTION_COLUMNS))
    return (pl.concat([approved, tentative]).filter(pl.col("date").is_not_null())
            .sort("date", "drug_name", "appl_no", nulls_last=True)
            .with_columns(pl.col("date").dt.year().alias("year"), pl.col("date").dt.month().alias("month")))


def approval_actions(approvals: pl.DataFrame) -> pl.DataFrame:
    """Original approvals as report rows (`ACTION_COLUMNS`)."""
    return approvals.with_columns(pl.col("approval_date").alias("date"), pl.lit("AP").alias("status"),
                                  pl.col("chemical_type").alias("classification")).select(ACTION_COLUMNS)


def undated_approvals(approvals: pl.DataFrame) -> pl.DataFrame:
    """The original approvals the data files give no date (so no month lists them), by application."""
    return approval_actions(approvals.filter(pl.col("approval_date").is_null()).sort("appl_no"))


def month_spans(actions: pl.DataFrame) -> dict[tuple[int, int], slice]:
    """Each (year, month) with an action -> its rows of `actions` (sorted by date)."""
    bounds = actions.with_row_index("index").group_by("year", "month", maintain_order=True).agg(
        pl.col("index").first(), pl.len())
    return {(year, month): slice(first, first + count) for year, month, first, count in bounds.iter_rows()}


def search_rows(applications: pl.DataFrame, products: pl.DataFrame) -> Search:
    table = (products.select("appl_no", "drug_name", "active_ingredient").unique()
             .join(applications.select(APPLICATION), on="appl_no", how="left")
             .sort("drug_name", "active_ingredient", "appl_no"))
    frame = table.with_row_index("row").with_columns(
        pl.col("drug_name").str.to_lowercase().alias("drug_lower"),
        pl.col("active_ingredient").str.to_lowercase().alias("ingredient_lower"))
    cells = [{"href": application_href(r["appl_no"]), **{c.key: c.cell(r) for c in SEARCH_COLUMNS}}
             for r in table.iter_rows(named=True)]
    return Search(frame, cells)


@cache
def catalog() -> Catalog:
    applications = TABLES.load("drug_applications")
    products = TABLES.load("drug_products")  # both by application, as build.py writes them
    submissions = TABLES.load("drug_submissions")
    approvals = TABLES.load("drug_approvals")
    summary = product_summary(products)
    actions = monthly_actions(applications, submissions, approvals, summary)
    table = application_table(applications, products, submissions, approvals, summary)
    return Catalog(
        applications=table,
        application_rows={appl_no: index for index, appl_no in enumerate(table["appl_no"].to_list())},
        products=products,
        submissions=history_order(submissions),  # the same spans: both are by application
        search=search_rows(applications, products),
        actions=actions,
        months=month_spans(actions),
        undated=undated_approvals(approvals),
        latest_action=submissions["submission_status_date"].max(),
    )
