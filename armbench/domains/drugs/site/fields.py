"""How the Drugs@FDA site writes its values: cells, application and submission labels, action
names, and the search results' sortable columns (`?sort=&order=` of `/daf/search`).

A report or application table cell is HTML (escaped text, or a link), its rows joined in Python;
unknown values are empty cells.
"""
from __future__ import annotations

from datetime import date

from markupsafe import Markup, escape

from armbench.replicas.web.listing import Column

ACTIONS = {"AP": "Approval", "TA": "Tentative Approval", "CR": "Complete Response"}
APPLICATION_TYPES = {"NDA": "New Drug Application", "ANDA": "Abbreviated New Drug Application",
                     "BLA": "Biologics License Application"}
NOT_LISTED = "not in the data files"  # an application Applications.txt lacks: no type, no company


def cell(value: object) -> str:
    """A table cell's content: dates YYYY-MM-DD, text escaped; null is empty."""
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    return str(escape(value))


def flag(value: int | None) -> str:
    """The products table's RLD and RS columns (1 or 0)."""
    return {1: "Yes", 0: "No"}.get(value, "")


def application_href(appl_no: str) -> str:
    return f"/daf/application/{appl_no}"


def application_label(appl_type: str | None, appl_no: str) -> str:
    """ "NDA 020702"; the number alone when the application's type is not in the data files."""
    return f"{appl_type} {appl_no}" if appl_type else appl_no


def application_link(appl_type: str | None, appl_no: str, suffix: str = "") -> str:
    return f'<a href="{application_href(appl_no)}">{application_label(appl_type, appl_no)}{suffix}</a>'


def submission_label(submission_type: str, number: int) -> str:
    """ "ORIG-1", "SUPPL-10"."""
    return f"{submission_type}-{number}"


def month_name(year: int, month: int) -> str:
    return date(year, month, 1).strftime("%B %Y")


def row(header: str, cells: list[str]) -> Markup:
    """`<tr><th scope="row">header</th><td>..</td>...</tr>` from HTML pieces."""
    return Markup(f'<tr><th scope="row">{header}</th>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def _plain(name: str):
    return lambda r: r[name] or ""


# The search results' columns, in table order: the first links to the application's page. Their
# cells are plain text: the shared results template escapes them.
SEARCH_COLUMNS: tuple[Column, ...] = (
    Column("drug", "Drug Name", "drug name", "drug_name", "text", _plain("drug_name")),
    Column("ingredient", "Active Ingredients", "active ingredient", "active_ingredient", "text",
           _plain("active_ingredient")),
    Column("application", "Application", "application number", "appl_no", "text",
           lambda r: application_label(r["appl_type"], r["appl_no"])),
    Column("company", "Company", "company", "sponsor_name", "text", _plain("sponsor_name")),
)
