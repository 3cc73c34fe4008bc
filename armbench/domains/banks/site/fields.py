"""How the FDIC site writes its values: amounts in thousands of dollars, dates, resolution words;
the two lists' columns and the bank page's labelled sections.

List cells are plain text (the templates escape them); an unknown value is an empty cell and
sorts last either way. A bank page says "Not available" instead.
"""
from __future__ import annotations

from datetime import date

from armbench.replicas.web.listing import Column
from armbench.replicas.web.record import Sections, Spec

NOT_AVAILABLE = "Not available"
THOUSANDS = "($ thousands)"
RESOLUTION_WORDS = {"FAILURE": "Failure", "ASSISTANCE": "Assistance"}


def amount(value: int | None) -> str:
    """307021614 -> "307,021,614" (thousands of dollars, as the FDIC reports them)."""
    return "" if value is None else f"{value:,}"


def day(value: date | None) -> str:
    return "" if value is None else value.isoformat()


def text(value: object) -> str:
    return "" if value is None else str(value)


def location(city: str, state: str) -> str:
    return f"{city}, {state}"


def or_not_available(show):
    """A bank page's value: `show`'s text, or NOT_AVAILABLE where the record has none."""
    return lambda *values: NOT_AVAILABLE if values[0] is None else show(*values)


def line(label: str, column: str, show=text) -> Spec:
    return Spec(label, (column,), or_not_available(show))


# Columns the two lists share, and each list's own; `sort_column` is a column of the catalog's frame.
NAME = Column("name", "Bank name", "bank name", "bank_name", "text", lambda r: r["bank_name"])
CERT = Column("cert", "Cert", "FDIC certificate number", "cert", "number", lambda r: text(r["cert"]))

FAILED_BANK_COLUMNS: tuple[Column, ...] = (
    NAME,
    Column("city", "City", "city", "city", "text", lambda r: r["city"]),
    Column("state", "State", "state", "state", "text", lambda r: r["state"]),
    CERT,
    Column("acquirer", "Acquiring institution", "acquiring institution", "acquirer_name", "text",
           lambda r: text(r["acquirer_name"])),
    Column("closing", "Closing date", "closing date", "fail_date", "date", lambda r: day(r["fail_date"])),
    Column("fund", "Fund", "fund number (FIN)", "fin", "number", lambda r: text(r["fin"])),
)

BANKFIND_COLUMNS: tuple[Column, ...] = (
    NAME,
    CERT,
    Column("location", "Location", "location", "city_state", "text", lambda r: location(r["city"], r["state"])),
    Column("effective", "Effective date", "effective date", "fail_date", "date", lambda r: day(r["fail_date"])),
    Column("resolution", "Resolution", "resolution", "resolution_type", "text",
           lambda r: RESOLUTION_WORDS[r["resolution_type"]]),
    Column("transaction", "Transaction type", "transaction type", "transaction_type", "text",
           lambda r: r["transaction_type"]),
    Column("insurance_fund", "Insurance fund", "insurance fund", "insurance_fund", "text",
           lambda r: r["insurance_fund"]),
    Column("assets", f"Total assets {THOUSANDS}", "total assets", "total_assets_thousands", "number",
           lambda r: amount(r["total_assets_thousands"])),
    Column("deposits", f"Total deposits {THOUSANDS}", "total deposits", "total_deposits_thousands", "number",
           lambda r: amount(r["total_deposits_thousands"])),
    Column("loss", f"Estimated loss {THOUSANDS}", "estimated loss", "estimated_loss_thousands", "number",
           lambda r: amount(r["estimated_loss_thousands"])),
)

# A bank page: every field of the record.
SECTIONS: Sections = (
    ("Institution", (
        line("Bank name", "bank_name"),
        line("City", "city"),
        line("State", "state"),
        line("FDIC certificate number (Cert)", "cert"),
        line("Charter class", "charter_class"),
        line("Bank number", "bank_no"),
    )),
    ("Resolution", (
        Spec("Resolution type", ("resolution_type",), RESOLUTION_WORDS.__getitem__),
        line("Effective date", "fail_date", day),
        line("Resolution date", "resolution_date", day),
        line("Transaction type", "transaction_type"),
        line("Insurance fund", "insurance_fund"),
        line("Fund code", "fund_code"),
        line("Fund (FIN)", "fin"),
        line("Acquiring institution", "acquirer_name"),
        Spec("Acquirer location", ("acquirer_city", "acquirer_state"), or_not_available(location)),
    )),
    (f"At failure or assistance {THOUSANDS}", (
        line("Total assets", "total_assets_thousands", amount),
        line("Total deposits", "total_deposits_thousands", amount),
        line("Estimated loss", "estimated_loss_thousands", amount),
        line("Estimated loss as of", "cost_as_of", day),
        line("Uninsured deposits", "uninsured_deposits", amount),
    )),
    ("Notes", (
        line("Comments", "comments"),
        line("FDIC record id", "fdic_id"),
    )),
)
