"""How a fund's values read on the screener: formatting, the list's columns, the fund page."""
from __future__ import annotations

from datetime import date

from armbench.domains.funds.data.metrics import AS_OF
from armbench.replicas.web.listing import Column
from armbench.replicas.web.record import Sections, Spec

NOT_AVAILABLE = "n/a"  # a fund too young for the figure, or a field the source lacks
STATUS_WORDS = {"open": "Open", "closed": "Closed to new investors"}
LOAD_WORDS = {"front": "front-end", "deferred": "deferred (CDSC)"}


def text(value: str | None) -> str:
    return value if value else NOT_AVAILABLE


def percent(value: float | None) -> str:
    """`0.54%`, `-12.27%`: two decimals, as screeners print them."""
    return NOT_AVAILABLE if value is None else f"{value:.2f}%"


def dollars(value: int) -> str:
    return f"${value:,}"


def millions(value: float) -> str:
    return f"${value:,.1f} M"


def stars(value: int | None) -> str:
    if value is None:
        return "Not rated"
    return f"{value} star" + ("s" if value > 1 else "")


def load(kind: str, pct: float) -> str:
    return "None" if kind == "none" else f"{pct:.2f}% {LOAD_WORDS[kind]}"


def day(value: date) -> str:
    return value.isoformat()


def status(value: str) -> str:
    return "Closed" if value == "closed" else "Open"


# The symbol heads each row and links to the fund's page.
COLUMNS: tuple[Column, ...] = (
    Column("symbol", "Symbol", "symbol", "symbol", "text", lambda r: r["symbol"]),
    Column("name", "Fund name", "fund name", "name", "text", lambda r: r["name"]),
    Column("category", "Category", "category", "category", "text", lambda r: r["category"]),
    Column("family", "Fund family", "fund family", "family", "text", lambda r: text(r["family"])),
    Column("expense", "Net expense ratio", "net expense ratio", "expense_ratio_pct", "number",
           lambda r: percent(r["expense_ratio_pct"])),
    Column("return_1y", "1-yr return", "1-year return", "return_1y_pct", "number",
           lambda r: percent(r["return_1y_pct"])),
    Column("return_3y", "3-yr return (annualized)", "3-year return", "return_3y_pct", "number",
           lambda r: percent(r["return_3y_pct"])),
    Column("return_5y", "5-yr return (annualized)", "5-year return", "return_5y_pct", "number",
           lambda r: percent(r["return_5y_pct"])),
    Column("rating", "Rating", "star rating", "rating", "number", lambda r: stars(r["rating"])),
    Column("assets", "Total assets", "total assets", "total_assets_musd", "number",
           lambda r: millions(r["total_assets_musd"])),
    Column("minimum", "Min. investment", "minimum investment", "min_investment_usd", "number",
           lambda r: dollars(r["min_investment_usd"])),
    Column("load", "Load", "sales charge", "load_pct", "number", lambda r: load(r["load_type"], r["load_pct"])),
    Column("status", "Status", "status", "status", "text", lambda r: status(r["status"])),
)


def line(label: str, column: str, show=text) -> Spec:
    return Spec(label, (column,), show)


SECTIONS: Sections = (
    ("Fund", (
        line("Symbol", "symbol"),
        line("Name", "name"),
        line("Fund family", "family"),
        line("Category group", "category_group"),
        line("Category", "category"),
    )),
    ("Status and costs (generated)", (
        line("Status", "status", lambda value: STATUS_WORDS[value]),
        line("Net expense ratio", "expense_ratio_pct", percent),
        Spec("Load (maximum sales charge)", ("load_type", "load_pct"), load),
        line("Minimum initial investment", "min_investment_usd", dollars),
    )),
    (f"Performance as of {AS_OF.isoformat()} (generated)", (
        line("1-year return", "return_1y_pct", percent),
        line("3-year return (annualized)", "return_3y_pct", percent),
        line("5-year return (annualized)", "return_5y_pct", percent),
        line("Star rating", "rating", stars),
    )),
    ("Size and history (generated)", (
        line("Total assets", "total_assets_musd", millions),
        line("Inception date", "inception_date", day),
    )),
)
