"""Reads the FDIC replica into `bank_failure_query` rows (the contract: armbench/domains/parity.py).

Pages read, and why:
- every page of BankFind, `/bankfind?page={n}` (42 of 100): it lists both failures and assistance
  transactions, so its links name every bank page; the Failed Bank List holds failures only.
- every bank page, `/bank/{fdic_id}` (4,114): the only page that shows a transaction's resolution
  date, charter class, bank number, acquirer location, cost date, uninsured deposits, comments and
  record id, and it shows every other field too, so the lists' own cells add nothing.

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import re

from armbench.domains.reading import fetch, fetch_pages, labelled_lines, list_query

TOOL = "bank_failure_query"
TABLE = "bank_failures"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("fdic_id",)
OUT_OF_TOOL: dict[str, str] = {}

NOT_AVAILABLE = "Not available"  # how a bank page shows a value the record lacks
FIELDS = {  # a bank page's label -> the tool field it shows
    "Bank name": "bank_name", "City": "city", "State": "state", "FDIC certificate number (Cert)": "cert",
    "Charter class": "charter_class", "Bank number": "bank_no", "Resolution type": "resolution_type",
    "Effective date": "fail_date", "Resolution date": "resolution_date", "Transaction type": "transaction_type",
    "Insurance fund": "insurance_fund", "Fund (FIN)": "fin", "Acquiring institution": "acquirer_name",
    "Total assets": "total_assets_thousands", "Total deposits": "total_deposits_thousands",
    "Estimated loss": "estimated_loss_thousands", "Estimated loss as of": "cost_as_of",
    "Uninsured deposits": "uninsured_deposits", "Comments": "comments", "FDIC record id": "fdic_id",
}
BANK_LINK = re.compile(r'<th scope="row"><a href="(/bank/\d+)">')
PAGES = re.compile(r"<p>Page 1 of (\d+)</p>")
YEAR = re.compile(r'<a href="/bankfind\?state=[^"]*">[^<]*, (\d{4})</a>')  # the breadcrumb: "PA, 1934"


# BankFind's filters a scope (field -> value) can use: the tool's field -> BankFind's parameter (a
# name finds its namesakes too; the derived solution keeps the exact ones).
LIST_FILTERS = {"state": "state", "fail_year": "year", "resolution_type": "resolution", "bank_name": "name"}


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    """Every transaction BankFind lists (filtered by the scope's fields it offers), from its page."""
    scope = dict(scope or {})
    if "resolution_type" in scope:  # the tool's FAILURE is BankFind's failure
        scope["resolution_type"] = str(scope["resolution_type"]).lower()
    query = list_query(scope, LIST_FILTERS)
    search = "/bankfind" + ("?" + query + "&" if query else "?")
    first = fetch(base + search.rstrip("?&"))
    pages = [first, *fetch_pages(base, [f"{search}page={n}" for n in range(2, int(PAGES.search(first).group(1)) + 1)])]
    return [bank_page(page) for page in fetch_pages(base, [href for page in pages for href in BANK_LINK.findall(page)])]


def bank_page(page: str) -> dict:
    """One transaction's every tool field, from its labelled lines and its breadcrumb's year."""
    shown = labelled_lines(page)
    row = {field: None if shown[label] == NOT_AVAILABLE else shown[label] for label, field in FIELDS.items()}
    # the site words the resolution "Failure" / "Assistance"; the tool codes it in capitals
    row["resolution_type"] = row["resolution_type"].upper()
    row["fail_year"] = YEAR.search(page).group(1)
    location = shown["Acquirer location"]  # "CITY, ST": the acquirer's city and state on one line
    city, state = (None, None) if location == NOT_AVAILABLE else location.rsplit(", ", 1)
    return row | {"acquirer_city": city, "acquirer_state": state}
