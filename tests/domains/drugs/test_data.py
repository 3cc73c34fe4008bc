"""The drugs tables: the CSVs' rows (and, when ../shared is present, exactly what the build makes of
them), the source's spot checks, nulled placeholder dates, and original approvals as the
questions' derivations define them."""
from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from armbench.domains.drugs import TABLES
from armbench.domains.drugs.data.build import (
    approvals,
    original_approvals,
    product_table,
    read,
    submission_table,
)
from armbench.paths import SHARED_DATA_DIR

SOURCE = SHARED_DATA_DIR / "drugs"
APPLICATIONS = TABLES.load("drug_applications")
PRODUCTS = TABLES.load("drug_products")
SUBMISSIONS = TABLES.load("drug_submissions")
APPROVALS = TABLES.load("drug_approvals")


def approval(appl_no: str) -> dict:
    return APPROVALS.filter(pl.col("appl_no") == appl_no).row(0, named=True)


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/drugs is not checked out")
def test_the_tables_are_the_csvs_and_rebuild_exactly():
    applications, products = read(SHARED_DATA_DIR, "applications"), product_table(SHARED_DATA_DIR)
    history = submission_table(SHARED_DATA_DIR)
    assert applications.equals(APPLICATIONS) and products.equals(PRODUCTS) and history.equals(SUBMISSIONS)
    assert products.equals(read(SHARED_DATA_DIR, "products", product_no=pl.Utf8))  # the CSV's order already
    assert approvals(applications, products, history).equals(APPROVALS)
    raw = pl.read_csv(SOURCE / "submissions.csv", infer_schema_length=None, schema_overrides={"appl_no": pl.Utf8})
    assert raw.columns == SUBMISSIONS.columns
    assert raw.filter(pl.col("submission_status_date") == "1900-01-01")["appl_no"].to_list() == ["060904"]


def test_row_counts_and_types():
    assert (APPLICATIONS.height, PRODUCTS.height, SUBMISSIONS.height, APPROVALS.height) == (
        21_447, 37_310, 150_661, 18_494)
    assert SUBMISSIONS.schema["submission_status_date"] == pl.Date
    assert SUBMISSIONS.schema["orphan_flag"] == pl.Boolean and SUBMISSIONS["orphan_flag"].sum() == 1_107
    assert set(APPLICATIONS["appl_no"].str.len_chars()) == {6} and PRODUCTS["product_no"].to_list()[0] == "004"
    assert APPROVALS["appl_no"].is_unique().all()


def test_the_placeholder_and_missing_dates_are_null():
    assert SUBMISSIONS["submission_status_date"].min() == date(1939, 2, 9)
    undated = SUBMISSIONS.filter(pl.col("submission_status_date").is_null())
    assert sorted(undated["appl_no"].to_list()) == ["009658", "060904"]
    assert APPROVALS.filter(pl.col("approval_date").is_null())["appl_no"].to_list() == ["009658", "060904"]
    assert SUBMISSIONS["submission_status_date"].max() == date(2018, 6, 25)


def test_the_source_spot_checks_hold():
    lipitor = approval("020702")
    assert (lipitor["appl_type"], lipitor["drug_name"], lipitor["approval_date"], lipitor["review_priority"],
            lipitor["chemical_type"], lipitor["orphan"]) == (
        "NDA", "LIPITOR", date(1996, 12, 17), "PRIORITY", "Type 1 - New Molecular Entity", False)
    keytruda = approval("125514")
    assert (keytruda["appl_type"], keytruda["drug_name"], keytruda["approval_date"], keytruda["review_priority"],
            keytruda["orphan"]) == ("BLA", "KEYTRUDA", date(2014, 9, 4), "PRIORITY", True)


def test_an_original_approval_is_the_earliest_orig_approval_preferring_a_chemical_type_that_day():
    rydapt = approval("207997")  # ORIG-1 "Efficacy" and ORIG-2 "Type 1" approved the same day
    assert (rydapt["submission_no"], rydapt["chemical_type"]) == (2, "Type 1 - New Molecular Entity")
    later = approval("019962")  # ORIG-1, then ORIG-41 approved years later
    assert later["submission_no"] == 1
    history = SUBMISSIONS.filter((pl.col("appl_no") == "019962") & (pl.col("submission_type") == "ORIG"))
    assert later["approval_date"] == history["submission_status_date"].min()
    tentative_only = SUBMISSIONS.filter(pl.col("submission_status") == "TA").join(
        SUBMISSIONS.filter(pl.col("submission_status") == "AP"), on="appl_no", how="anti")
    assert not tentative_only.is_empty() and tentative_only.join(APPROVALS, on="appl_no").is_empty()


def test_original_approvals_are_what_the_derivations_define():
    """Per year, the applications whose original approval is Type 1 (any ORIG approval of the first
    day, as the questions' SQL joins on that date) are the table's rows starting "Type 1 -"."""
    context = pl.SQLContext(drug_submissions=SUBMISSIONS)
    derived = context.execute("""
        WITH approvals AS (SELECT appl_no, min(submission_status_date) AS approved FROM drug_submissions
          WHERE submission_type = 'ORIG' AND submission_status = 'AP' GROUP BY appl_no)
        SELECT DISTINCT v.appl_no FROM approvals v JOIN drug_submissions s
          ON s.appl_no = v.appl_no AND s.submission_status_date = v.approved
        WHERE s.submission_type = 'ORIG' AND s.submission_status = 'AP'
          AND s.submission_class_description LIKE 'Type 1 -%'""", eager=True)
    table = APPROVALS.filter(pl.col("chemical_type").str.starts_with("Type 1 -"))
    assert sorted(derived["appl_no"].to_list()) == table["appl_no"].to_list()
    assert table.height == 1_411 and not table["chemical_type"].str.starts_with("Type 10").any()
    assert APPROVALS.filter(pl.col("chemical_type").str.starts_with("Type 10")).height == 6


def test_original_approvals_pick_one_submission_per_application():
    history = pl.DataFrame({
        "appl_no": ["000001"] * 4 + ["000002"],
        "submission_type": ["ORIG", "ORIG", "ORIG", "SUPPL", "ORIG"],
        "submission_no": [1, 2, 3, 4, 1],
        "submission_status": ["AP", "AP", "AP", "AP", "TA"],
        "submission_status_date": [date(2001, 1, 2), date(2001, 1, 2), date(2000, 1, 1), date(1999, 1, 1),
                                   date(2000, 1, 1)],
        "submission_class_description": ["Efficacy", "Type 3 - New Dosage Form", None, "Labeling", None],
    })
    picked = original_approvals(history)
    assert picked["submission_no"].to_list() == [3]
    picked = original_approvals(history.filter(pl.col("submission_no") != 3))
    assert picked["submission_no"].to_list() == [2]


def test_products_join_into_one_row_per_application():
    imitrex = approval("020080")
    assert imitrex["drug_name"] == "IMITREX | IMITREX STATDOSE" and imitrex["products"] == PRODUCTS.filter(
        pl.col("appl_no") == "020080").height
    assert APPROVALS["appl_type"].null_count() == 1_463 and APPROVALS["drug_name"].null_count() == 850
    unlisted = pl.concat([PRODUCTS.select("appl_no"), SUBMISSIONS.select("appl_no")]).unique().join(
        APPLICATIONS, on="appl_no", how="anti")
    assert unlisted.height == 1_753  # as DATA.md says
