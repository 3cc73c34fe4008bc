"""Generated screener metrics for the fund universe: deterministic, calibrated, labelled as such.

No free dataset has them (`../shared/data/funds/SOURCE.md`), so each value is drawn from a
uniform number hashed from a key (the fund's symbol, or its portfolio: the name without the share
class, plus the category) and the field's name. A fund's values therefore never depend on row
order or on other rows, except the star rating, which ranks each category's funds as real ratings
do. Calibration: `../shared/data/funds/CALIBRATION.md` (quantiles, counts, category medians); the
choices made here are listed in DATA.md.
"""
from __future__ import annotations

import hashlib
import math
import re
from datetime import date, timedelta
from statistics import NormalDist

import numpy as np
import polars as pl

SEED = "armbench-funds-1"
AS_OF = date(2022, 7, 31)  # the calibration export's return date
GENERATED_COLUMNS = (  # in the order `generate` adds them
    "inception_date", "expense_ratio_pct", "return_1y_pct", "return_3y_pct", "return_5y_pct",
    "rating", "total_assets_musd", "min_investment_usd", "load_type", "load_pct", "status",
    "relevance",
)

# Calibration categories (median net expense %, median 1y %, median 5y %) and the
# FinanceDatabase categories each stands for; categories not listed use "Large Blend".
PROFILES = {
    "Large Growth": ((0.95, -15.68, 13.34), ("Growth", "Technology", "Communications",
                                              "Consumer Discretionary", "Health Care")),
    "Large Value": ((0.96, -0.57, 8.87), ("Value", "Energy", "Utilities", "Consumer Staples",
                                          "Financials", "Materials", "Industrials")),
    "Large Blend": ((0.96, -7.60, 11.25), ()),
    "Mid-Cap Growth": ((1.13, -24.23, 10.30), ("Mid Cap",)),
    "Small Growth": ((1.01, -23.09, 10.43), ("Small Cap", "Micro Cap")),
    "Global Large-Stock Growth": ((1.10, -19.76, 7.80), (
        "Developed Markets", "Emerging Markets", "Frontier Markets", "World", "Japan")),
    "Allocation--50% to 70% Equity": ((0.94, -7.69, 7.14), (
        "Target Date", "Allocation", "Alternative", "Funds", "Fundss", "Unit Investment Trust",
        "Trading", "Derivatives", "Commodities Broad Basket", "Pension Plans", "REITs",
        "Real Estate", "Commercial Real Estate", "Real Estate Development",
        "Real Estate Services", "Residential Real Estate")),
    "Muni National Interm": ((0.72, -7.13, 1.47), ("Municipal Bonds",)),
    "Intermediate Core-Plus Bond": ((0.77, -10.12, 1.34), (
        "Bonds", "Investment Grade Bonds", "Mortgage Backed Securities")),
    "High Yield Bond": ((1.00, -7.76, 2.19), ("High Yield Bonds",)),
    "Corporate Bond": ((0.86, -12.67, 1.68), ("Corporate Bonds",)),
    "Intermediate Government": ((0.77, -7.01, 0.41), (
        "Government Bonds", "Treasury Bonds", "Inflation-Protected Securities")),
    "Short Government": ((0.58, -3.34, 0.72), ("Money Market Instruments", "Cash", "Currencies")),
}
PROFILE_OF = {category: name for name, (_, members) in PROFILES.items() for category in members}
DEFAULT_PROFILE = "Large Blend"
THREE_OF_FIVE_YEAR = 2.26 / 2.98  # overall 3y median / 5y median: no category 3y medians exist

# Spread within a category (the calibration's quantiles mix categories, so are wider).
EXPENSE_LOG_SD = 0.35
RETURN_SD = {"1y": 6.0, "3y": 3.5, "5y": 3.0}
THREE_YEAR_CORRELATION = 0.6  # of a portfolio's 3y draw with its 5y draw

# Share classes, told by the last word(s) of the name ("Class A", "Institutional Shares", ...).
SUFFIX = re.compile(
    r"[\s,\-–]*(?:Class\s+(?P<after>[\w-]+)(?:\s+Shares?)?|(?P<before>[\w-]+)\s+(?:Class|Shares?))\s*$",
    re.IGNORECASE,
)
CLASS_KINDS = (  # (kind, pattern of the class word); first match wins, else "other"
    ("front", re.compile(r"A\d?|529-A", re.I)),
    ("deferred", re.compile(r"[BC]\d?|529-[BC]", re.I)),
    ("retirement", re.compile(r"R|R-?\d|K\d?|529-E|RETIREMENT|ADMINISTRATIVE|M\d", re.I)),
    ("institutional", re.compile(r"I\d?|IS|INST|INSTITUTIONAL|Y|Z|F\d?|P|W|PREMIER", re.I)),
)
EXPENSE_ADDED = {"front": 0.0, "deferred": 0.75, "retirement": 0.10, "institutional": -0.25,
                 "other": 0.05}
INDEX_EXPENSE_FACTOR = 0.35
MIN_EXPENSE = 0.02
MIN_INVESTMENT = {  # (amount in USD, probability) per class kind
    "front": ((250, 0.05), (500, 0.10), (1_000, 0.45), (2_500, 0.35), (3_000, 0.05)),
    "deferred": ((250, 0.05), (500, 0.10), (1_000, 0.45), (2_500, 0.35), (3_000, 0.05)),
    "retirement": ((0, 1.0),),
    "institutional": ((0, 0.15), (100_000, 0.20), (250_000, 0.05), (1_000_000, 0.45),
                      (5_000_000, 0.15)),
    "other": ((0, 0.10), (1_000, 0.20), (2_500, 0.45), (3_000, 0.15), (10_000, 0.10)),
}
FRONT_LOADS = {  # maximum front-end sales charge %, by whether the fund is fixed income
    False: ((5.75, 0.60), (5.50, 0.25), (5.00, 0.15)),
    True: ((4.25, 0.40), (4.50, 0.20), (3.75, 0.25), (2.25, 0.15)),
}
OTHER_FRONT_LOAD_SHARE = 0.45  # classes named neither A nor C that still carry a front load
# ... unless the fund is an index fund or its family sells no-load funds.
NO_LOAD_FAMILIES = ("Vanguard Asset Management", "T. Rowe Price", "Dodge & Cox", "Fidelity Investments")
DEFERRED_LOAD = 1.00  # contingent deferred sales charge %, on redemptions in the first year

# (probability, value) knots of quantile functions; the 5-95% knots are the calibration's.
ASSETS_KNOTS = ((0, 1.0), (0.05, 95.30), (0.25, 454.77), (0.5, 1141.83), (0.75, 4375.40),
                (0.95, 48442.18), (1, 400_000.0))  # millions of USD, interpolated in log space
INCEPTION_KNOTS = ((0, 1924.5), (0.05, 1975.0), (0.25, 1994.0), (0.5, 2004.0), (0.75, 2012.0),
                   (0.95, 2019.0), (1, 2022.5))  # fractional years

CLOSED_SHARE = {"Small Cap": 0.12, "Micro Cap": 0.12, "Mid Cap": 0.12}
OTHER_CLOSED_SHARE = 0.044  # about 5% of all funds closed to new investors
# Morningstar's rule: top 10% of a category 5 stars, next 22.5% 4, middle 35% 3, 22.5% 2, 10% 1.
STAR_CUTS = (0.10, 0.325, 0.675, 0.90)
NORMAL = NormalDist()


def uniform(key: str, field: str) -> float:
    """A number in (0, 1) fixed by (key, field): the only source of randomness here."""
    digest = hashlib.sha256(f"{SEED}|{field}|{key}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def uniforms(keys: list[str], field: str) -> np.ndarray:
    return np.array([uniform(key, field) for key in keys])


def normals(keys: list[str], field: str) -> np.ndarray:
    return np.array([NORMAL.inv_cdf(uniform(key, field)) for key in keys])


def from_knots(u: np.ndarray, knots: tuple[tuple[float, float], ...], log: bool = False) -> np.ndarray:
    probabilities, values = zip(*knots)
    if log:
        return np.exp(np.interp(u, probabilities, np.log(values)))
    return np.interp(u, probabilities, values)


def pick(u: float, choices: tuple[tuple[float, float], ...]) -> float:
    """The choice whose cumulative probability band holds `u`."""
    total = 0.0
    for value, probability in choices:
        total += probability
        if u < total:
            return value
    return choices[-1][0]


def share_class(name: str) -> tuple[str, str]:
    """(portfolio name without the share class, class kind)."""
    match = SUFFIX.search(name)
    if match is None:
        return name, "other"
    word = match["after"] or match["before"]
    kind = next((kind for kind, pattern in CLASS_KINDS if pattern.fullmatch(word)), "other")
    return name[:match.start()], kind


def fractional_year_to_date(year: float) -> date:
    whole = math.floor(year)
    start = date(whole, 1, 1)
    return start + timedelta(days=int((year - whole) * (date(whole + 1, 1, 1) - start).days))


def years_before(day: date, years: int) -> date:
    return day.replace(year=day.year - years)


def stars(frame: pl.DataFrame) -> pl.Series:
    """Star rating by rank within category of the mean of the 3y and 5y returns (the 3y alone
    for funds younger than 5 years); null for funds younger than 3 years. Ties rank by symbol."""
    scored = frame.select(
        "symbol", "category", pl.mean_horizontal("return_3y_pct", "return_5y_pct").alias("score")
    ).with_row_index("row")
    rated = scored.filter(pl.col("score").is_not_null()).sort("score", "symbol", descending=[True, False])
    rated = rated.with_columns(
        (pl.int_range(pl.len()).over("category") / pl.len().over("category")).alias("above")
    )  # the share of the category's rated funds ranked above this one
    star = pl.lit(5, dtype=pl.Int8)
    for cut in STAR_CUTS:
        star = star - (pl.col("above") >= cut).cast(pl.Int8)
    rated = rated.select("row", star.alias("rating"))
    return scored.join(rated, on="row", how="left").sort("row")["rating"]


def load_of(kind: str, fund: dict) -> tuple[str, float]:
    """(load type, maximum sales charge %) of a share class."""
    if kind == "deferred":
        return "deferred", DEFERRED_LOAD
    may_load = fund["family"] not in NO_LOAD_FAMILIES and not is_index(fund["name"])
    other_with_load = kind == "other" and may_load and uniform(fund["symbol"], "load") < OTHER_FRONT_LOAD_SHARE
    if kind == "front" or other_with_load:
        fixed_income = fund["category_group"] == "Fixed Income"
        return "front", pick(uniform(fund["symbol"], "front_load"), FRONT_LOADS[fixed_income])
    return "none", 0.0


def is_index(name: str) -> bool:
    return re.search(r"\bIndex\b", name) is not None


def generate(funds: pl.DataFrame) -> pl.DataFrame:
    """`funds` (symbol, name, category_group, category, family) plus every generated column."""
    symbols = funds["symbol"].to_list()
    portfolios, kinds = zip(*(share_class(name) for name in funds["name"]))
    keys = [f"{portfolio}|{category}" for portfolio, category in zip(portfolios, funds["category"])]
    profile = [PROFILES[PROFILE_OF.get(c, DEFAULT_PROFILE)][0] for c in funds["category"]]
    median_expense, median_1y, median_5y = (np.array(column) for column in zip(*profile))

    # Share classes of one portfolio share its expense and return draws; each class then
    # adds its own costs, and its returns are lower by what it costs more.
    base = median_expense * np.exp(EXPENSE_LOG_SD * normals(keys, "expense"))
    base *= np.array([INDEX_EXPENSE_FACTOR if is_index(name) else 1.0 for name in funds["name"]])
    expense = np.round(np.maximum(MIN_EXPENSE, base + np.array([EXPENSE_ADDED[k] for k in kinds])), 2)
    z5 = normals(keys, "return_5y")
    z3 = THREE_YEAR_CORRELATION * z5 + math.sqrt(1 - THREE_YEAR_CORRELATION**2) * normals(keys, "return_3y")
    gross = {
        1: median_1y + RETURN_SD["1y"] * normals(keys, "return_1y"),
        3: median_5y * THREE_OF_FIVE_YEAR + RETURN_SD["3y"] * z3,
        5: median_5y + RETURN_SD["5y"] * z5,
    }
    inception = [fractional_year_to_date(year)
                 for year in from_knots(uniforms(symbols, "inception"), INCEPTION_KNOTS)]
    returns = {
        years: [round(float(value), 2) if day <= years_before(AS_OF, years) else None
                for value, day in zip(gross[years] - (expense - base), inception)]
        for years in gross
    }
    frame = funds.with_columns(
        pl.Series("inception_date", inception, dtype=pl.Date),
        pl.Series("expense_ratio_pct", expense),
        *(pl.Series(f"return_{years}y_pct", values, dtype=pl.Float64) for years, values in returns.items()),
    )
    frame = frame.with_columns(stars(frame))

    assets = np.round(from_knots(uniforms(symbols, "assets"), ASSETS_KNOTS, log=True), 1)
    loads = [load_of(kind, fund) for kind, fund in zip(kinds, funds.iter_rows(named=True))]
    closed = [uniform(key, "closed") < CLOSED_SHARE.get(category, OTHER_CLOSED_SHARE)
              for key, category in zip(keys, funds["category"])]
    # The site's default order: a made-up "relevance" mixing size, rating and chance; never shown.
    relevance = (50 * uniforms(symbols, "relevance") + 6 * np.log10(1 + assets)
                 + 4 * frame["rating"].fill_null(0).to_numpy())
    return frame.with_columns(
        pl.Series("total_assets_musd", assets),
        pl.Series("min_investment_usd", [int(pick(uniform(symbol, "minimum"), MIN_INVESTMENT[kind]))
                                         for symbol, kind in zip(symbols, kinds)], dtype=pl.Int64),
        pl.Series("load_type", [load for load, _ in loads]),
        pl.Series("load_pct", [pct for _, pct in loads], dtype=pl.Float64),
        pl.Series("status", ["closed" if shut else "open" for shut in closed]),
        pl.Series("relevance", np.round(relevance, 2)),
    )
