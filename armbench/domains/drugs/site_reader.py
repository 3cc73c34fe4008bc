"""Read the Drugs@FDA replica site into drug_query's rows (the contract: armbench/domains/parity.py).

Pages read, 19,385 in all:
- `/daf/reports/`: the link to every monthly report, and below them the original approvals without
  a date (two, in no month's report), in a report's columns.
- `/daf/reports/{YYYY}/{MM}`, 890 of them: each application's original approval in the month it
  was approved (date, drug names, application type and number, submission, active ingredients,
  company, classification, review priority), beside the month's tentative approvals, which the
  tool leaves out on purpose ("Not rows: tentative approvals").
- `/daf/application/{appl_no}`, one per original approval in a report or undated: what no report
  shows, its products (forms and routes, marketing statuses, how many) and the orphan status of
  its original approval's submission.

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import re

from armbench.domains.reading import body_rows, fetch

TOOL = "drug_query"
TABLE = "drug_approvals"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("appl_no",)
OUT_OF_TOOL = {"tentative approval": "Not rows: tentative approvals"}

# A report's Submission cell: "NDA 020702 ORIG-1", or "020702 ORIG-1" without a known type.
SUBMISSION = re.compile(r"(?:(?P<appl_type>[A-Z]+) )?(?P<appl_no>\d{6}) ORIG-(?P<submission_no>\d+)")
SEPARATOR = " | "  # the tool joins an application's distinct product values with it
UNDATED = "<h2>Original approvals without a date</h2>"  # the reports index's section after the months


def read_site(base: str) -> list[dict]:
    """Every report row and undated original approval; then, for each original approval, what its
    application page adds."""
    index, _, undated = fetch(f"{base}/daf/reports/").partition(UNDATED)
    months = re.findall(r'href="(/daf/reports/\d{4}/\d{2})"', index)
    rows = [row for month in months for row in report_rows(fetch(base + month))] + report_rows(undated)
    approvals = [row for row in rows if "out_of_tool" not in row]
    return rows + [application_row(fetch(f"{base}/daf/application/{row['appl_no']}"), row["submission_no"])
                   for row in approvals]


def report_rows(page: str) -> list[dict]:
    """A report's original approvals, and its tentative approvals marked out of the tool (an undated
    approval's date is an empty cell: None)."""
    rows = []
    for date, drug, submission, ingredient, company, classification, priority, status in shown_rows(page):
        row = SUBMISSION.fullmatch(submission).groupdict() | {
            "approval_date": date, "drug_name": drug, "active_ingredient": ingredient, "sponsor_name": company,
            "chemical_type": classification, "review_priority": priority,
        }
        rows.append(row if status == "Approval" else {**row, "out_of_tool": "tentative approval"})
    return rows


def application_row(page: str, submission_no: str) -> dict:
    """An application's products and the orphan status of its submission ORIG-`submission_no`."""
    head, _, rest = page.partition("<h2>Products</h2>")
    products, _, history = rest.partition("<h2>Approval Date(s) and History</h2>")
    appl_no = dict(shown_rows(head))["Application No."]
    product_rows = shown_rows(products)
    (orphan,) = [status for _, submission, action, _, _, status in shown_rows(history)
                 if submission == f"ORIG-{submission_no}" and action == "Approval"]
    return {
        "appl_no": appl_no,
        # One row per product on the page; the tool holds their distinct values, joined, and their count.
        "form_route": joined(product[4] for product in product_rows),
        "marketing_status": joined(product[5] for product in product_rows),
        "products": str(len(product_rows)) if product_rows else None,
        "orphan": orphan == "Orphan",
    }


def joined(values) -> str | None:
    return SEPARATOR.join(dict.fromkeys(value for value in values if value)) or None


def shown_rows(page: str) -> list[list[str | None]]:
    """The page's table body rows (`body_rows`), None for an empty cell (the site's missing value)."""
    return [[cell or None for cell in row] for row in body_rows(page)]
