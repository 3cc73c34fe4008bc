"""gpu_query: filter, sort and aggregate the GPUs of the replica site, read over HTTP.

The site lists GPUs at /gpus, 100 a page, with the filters manufacturer, year (of release),
generation, memory_type and q (name contains), and the columns name, manufacturer, GPU chip,
release date, memory size, type and bus. Every other field is only on a GPU's own page,
/gpus/<slug>. A call:
1. checks its arguments (a mistake returns {"error": {"type": "invalid_arguments", ...}});
2. turns the filters the list supports into a few list queries: a text filter on manufacturer,
   generation or memory type becomes the options of the list's form it accepts, date filters
   become release years, a name filter becomes q;
3. reads every page of those queries and applies the filters the list's columns answer, then opens
   the GPU pages of the rows left (a few at a time) only if a field it needs is not on the list;
4. filters, sorts (rows lacking the field last, ties by name), aggregates and picks the fields.
Standard library only; nothing is kept between calls. REPLICA_URL is the replica's base URL.
"""

import calendar
import html
import math
import operator
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any

REPLICA_URL: str  # set by the harness before this module runs

NUMBER_FIELDS = ("memory_size_gb", "memory_bus_bits", "memory_bandwidth_gb_s", "thermal_design_power_w",
                 "die_size_mm2", "transistor_count_m", "process_size_nm", "fp16_gflop_s", "fp32_gflop_s",
                 "fp64_gflop_s")
KINDS = {
    **dict.fromkeys(("manufacturer", "name", "gpu_name", "generation", "architecture", "memory_type"), "string"),
    "release_date": "date",
    **dict.fromkeys(NUMBER_FIELDS, "number"),
}
RETURNABLE = (*KINDS, "source_url")
DEFAULT_FIELDS = ("name", "manufacturer", "release_date")
# The list's column headers and the GPU page's labels, as fields.
LIST_COLUMNS = {"Name": "name", "Manufacturer": "manufacturer", "GPU chip": "gpu_name", "Released": "release_date",
                "Memory size": "memory_size_gb", "Memory type": "memory_type", "Memory bus": "memory_bus_bits"}
PAGE_LABELS = {
    **LIST_COLUMNS, "Release date": "release_date", "Generation": "generation", "Architecture": "architecture",
    "Process size": "process_size_nm", "Transistors": "transistor_count_m", "Die size": "die_size_mm2",
    "Bandwidth": "memory_bandwidth_gb_s", "TDP": "thermal_design_power_w", "FP16 (half) performance": "fp16_gflop_s",
    "FP32 (float) performance": "fp32_gflop_s", "FP64 (double) performance": "fp64_gflop_s",
    "TechPowerUp page": "source_url",
}
SITE_FILTERS = ("manufacturer", "generation", "memory_type")  # list filters named as their field
COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge,
               "lt": operator.lt, "lte": operator.le}
OPS_BY_KIND = {
    "string": ("eq", "ne", "in", "contains", "starts_with", "is_null", "not_null"),
    "number": (*COMPARISONS, "in", "is_null", "not_null"),
    "date": (*COMPARISONS, "in", "is_null", "not_null"),
}
AGGREGATABLE = {"avg": NUMBER_FIELDS, "sum": NUMBER_FIELDS, "min": (*NUMBER_FIELDS, "release_date"),
                "max": (*NUMBER_FIELDS, "release_date"), "count": tuple(KINDS)}
ARGUMENTS = ("filters", "sort_by", "order", "fields", "limit", "aggregate")
MAX_LIMIT = 200
MAX_LIST_QUERIES = 8  # beyond this, crawl fewer filtered lists and filter the rows here
THREADS = 4
TIMEOUT_S = 20

ROW = re.compile(r'<tr>\s*<th scope="row"><a href="(/gpus/[^"?]+)">(.*?)</a></th>(.*?)</tr>', re.S)
CELL = re.compile(r"<td>(.*?)</td>", re.S)
HEADER = re.compile(r'<th scope="col"[^>]*>\s*<a [^>]*>(.*?)</a>', re.S)
PAGE_COUNT = re.compile(r"<p>Page \d+ of (\d+)</p>")
SELECT = re.compile(r'<select name="(\w+)">(.*?)</select>', re.S)
OPTION = re.compile(r"<option(?: selected)?>(.*?)</option>", re.S)
LABELLED = re.compile(r'<th scope="row">(.*?)</th>\s*<td>(.*?)</td>', re.S)
TAG = re.compile(r"<[^>]+>")
DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


class InvalidArguments(ValueError):
    """A mistake in the arguments; the model gets its message."""


# --- arguments -----------------------------------------------------------------------------------

def choice(value: Any, choices: tuple[str, ...], at: str) -> str:
    if value not in choices:
        raise InvalidArguments(f"{at}: {value!r} is not one of {', '.join(choices)}")
    return value


def string_value(value: Any, at: str) -> str:
    if not isinstance(value, str):
        raise InvalidArguments(f"{at}: {value!r} is not a string")
    return value.lower()


def number_value(value: Any, at: str) -> float:
    try:
        number = float(value) if isinstance(value, str) else value
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
        raise InvalidArguments(f"{at}: {value!r} is not a number")
    return number


def day_span(value: Any, at: str) -> tuple[str, str]:
    """A year, month or day ("2021", "2021-06", "2021-06-30" or 2021) as its first and last ISO day."""
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""
    match = DATE.fullmatch(text)
    try:
        year, month, day = (int(part) if part else None for part in match.groups())
        if month is None:
            first, last = date(year, 1, 1), date(year, 12, 31)
        elif day is None:
            first, last = date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        else:
            first = last = date(year, month, day)
    except (AttributeError, ValueError):  # no match, or no such day
        raise InvalidArguments(f'{at}: {value!r} is not a date "YYYY", "YYYY-MM" or "YYYY-MM-DD"') from None
    return first.isoformat(), last.isoformat()


def listed(value: Any, at: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise InvalidArguments(f"{at}: `in` needs a non-empty list of values")
    return value


@dataclass(frozen=True)
class Filter:
    field: str
    op: str
    test: Callable[[Any], bool]  # on a known value
    text: str = ""  # text ops: the value, lower-cased
    span: tuple[str | None, str | None] = (None, None)  # date ops: days it can hold (or more)

    def holds(self, value: Any) -> bool:
        if self.op in ("is_null", "not_null"):
            return (value is None) == (self.op == "is_null")
        return value is not None and self.test(value)  # a null never matches a comparison

    def may_hold_year(self, year: int) -> bool:
        low, high = self.span
        return (low is None or low <= f"{year}-12-31") and (high is None or high >= f"{year}-01-01")


def checked_filter(spec: Any, at: str) -> Filter:
    if not isinstance(spec, dict) or not {"field", "op"} <= spec.keys() <= {"field", "op", "value"}:
        raise InvalidArguments(f"{at}: a filter is an object {{field, op, value}}")
    field = choice(spec["field"], tuple(KINDS), f"{at}.field")
    kind, value, where = KINDS[field], spec.get("value"), f"{at}.value"
    op = choice(spec["op"], OPS_BY_KIND[kind], f"{at}.op (for {kind} field {field})")
    if op in ("is_null", "not_null"):
        return Filter(field, op, bool)
    if kind == "string":
        if op == "in":
            wanted = {string_value(item, where) for item in listed(value, where)}
            return Filter(field, op, lambda v: v.lower() in wanted)
        text = string_value(value, where)
        tests = {"contains": lambda v: text in v.lower(), "starts_with": lambda v: v.lower().startswith(text)}
        return Filter(field, op, tests.get(op) or (lambda v: COMPARISONS[op](v.lower(), text)), text=text)
    if kind == "number":
        if op == "in":
            numbers = [number_value(item, where) for item in listed(value, where)]
            return Filter(field, op, lambda v: v in numbers)
        number = number_value(value, where)
        return Filter(field, op, lambda v: COMPARISONS[op](v, number))
    if op == "in":
        spans = [day_span(item, where) for item in listed(value, where)]
        return Filter(field, op, lambda v: any(first <= v <= last for first, last in spans),
                      span=(min(first for first, _ in spans), max(last for _, last in spans)))
    first, last = day_span(value, where)
    tests = {"eq": (lambda v: first <= v <= last, (first, last)), "ne": (lambda v: not first <= v <= last, (None, None)),
             "lt": (lambda v: v < first, (None, first)), "gte": (lambda v: v >= first, (first, None)),
             "lte": (lambda v: v <= last, (None, last)), "gt": (lambda v: v > last, (last, None))}
    test, span = tests[op]
    return Filter(field, op, test, span=span)


@dataclass(frozen=True)
class Query:
    filters: list[Filter]
    sort_by: str | None
    order: str
    fields: list[str]
    limit: int
    aggregate: tuple[str, str | None] | None


def checked(arguments: dict[str, Any]) -> Query:
    unknown = sorted(set(arguments) - set(ARGUMENTS))
    if unknown:
        raise InvalidArguments(f"unknown argument(s) {', '.join(unknown)}; arguments: {', '.join(ARGUMENTS)}")
    specs = arguments.get("filters") or []
    if not isinstance(specs, list):
        raise InvalidArguments("filters: a list of {field, op, value}")
    filters = [checked_filter(spec, f"filters[{i}]") for i, spec in enumerate(specs)]
    sort_by = arguments.get("sort_by")
    sort_by = None if sort_by is None else choice(sort_by, tuple(KINDS), "sort_by")
    order = choice(arguments.get("order") or "desc", ("asc", "desc"), "order")
    limit = arguments.get("limit", 50)
    if isinstance(limit, str) and limit.isdigit() or isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArguments(f"limit: {limit!r} is not a whole number from 1 to {MAX_LIMIT}")
    aggregate = arguments.get("aggregate")
    if aggregate is not None:
        if not isinstance(aggregate, dict) or not {"fn"} <= aggregate.keys() <= {"fn", "field"}:
            raise InvalidArguments("aggregate: an object {fn, field}")
        fn = choice(aggregate["fn"], tuple(AGGREGATABLE), "aggregate.fn")
        field = aggregate.get("field")
        if field is not None or fn != "count":
            field = choice(field, AGGREGATABLE[fn], f"aggregate.field (for {fn})")
        aggregate = (fn, field)
    fields = arguments.get("fields")
    if fields:
        if not isinstance(fields, list):
            raise InvalidArguments("fields: a list of field names")
        fields = [choice(field, RETURNABLE, f"fields[{i}]") for i, field in enumerate(fields)]
    else:
        used = [f.field for f in filters] + [sort_by, aggregate[1] if aggregate else None]
        fields = [*DEFAULT_FIELDS, *(field for field in used if field)]
    return Query(filters, sort_by, order, list(dict.fromkeys(fields)), limit, aggregate)


# --- the site --------------------------------------------------------------------------------------

def replica_url() -> str:
    """The harness assigns REPLICA_URL in this module's namespace before running it."""
    url = globals().get("REPLICA_URL")
    if not url:
        raise RuntimeError("REPLICA_URL is not set: the harness assigns the replica's address before running the tool")
    return url.rstrip("/")


def fetch(path: str, params: dict[str, Any] | None = None) -> str:
    url = replica_url() + urllib.parse.quote(path) + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            return response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"the replica answered {error.code} to {path}?{urllib.parse.urlencode(params or {})}") from None


def clean(fragment: str) -> str:
    return html.unescape(TAG.sub("", fragment)).strip()


def value_of(field: str, text: str) -> Any:
    """A shown value as data: "Unknown" (which the site also shows for a 0) is null, "1,024 bit" 1024."""
    if text in ("", "Unknown"):
        return None
    if KINDS.get(field) == "number":
        number = text.split()[0].replace(",", "")
        return float(number) if "." in number else int(number)
    return text


def form_options(page: str) -> dict[str, list[str]]:
    """The list's filter form: each select's options (not its "any" choice)."""
    return {name: [clean(option) for option in OPTION.findall(body)] for name, body in SELECT.findall(page)}


def list_rows(page: str, query: dict[str, Any]) -> list[dict[str, Any]]:
    """A list page's rows as fields, with `page` (the GPU's address) and the fields `query` pins."""
    columns = [LIST_COLUMNS.get(clean(header)) for header in HEADER.findall(page)]
    pinned = {field: query[field] for field in SITE_FILTERS if field in query}
    rows = []
    for address, name, cells in ROW.findall(page):
        values = zip(columns, [name, *CELL.findall(cells)])
        rows.append({"page": address, **{f: value_of(f, clean(raw)) for f, raw in values if f}, **pinned})
    return rows


def page_count(page: str) -> int:
    found = PAGE_COUNT.search(page)
    return int(found.group(1)) if found else 1


def gpu_fields(page: str) -> dict[str, Any]:
    return {PAGE_LABELS[label]: value_of(PAGE_LABELS[label], clean(raw))
            for label, raw in LABELLED.findall(page) if label in PAGE_LABELS}


def list_queries(query: Query, options: Callable[[], dict[str, list[str]]]) -> list[dict[str, Any]]:
    """The list queries whose rows include every GPU the filters can match (none: nothing can)."""
    dimensions = []
    for field, param in (*((f, f) for f in SITE_FILTERS), ("release_date", "year")):
        on = [f for f in query.filters if f.field == field]
        if not on or any(f.op == "is_null" for f in on):
            continue
        if field == "release_date":
            dimensions.append((param, [y for y in options()[param] if all(f.may_hold_year(int(y)) for f in on)]))
        else:
            dimensions.append((param, [value for value in options()[param] if all(f.holds(value) for f in on)]))
    names = [f.text for f in query.filters if f.field == "name" and f.op in ("eq", "contains", "starts_with")]
    queries = [{"q": max(names, key=len)} if names else {}]
    for param, values in sorted(dimensions, key=lambda dimension: len(dimension[1])):
        if not values:
            return []
        if len(queries) * len(values) > MAX_LIST_QUERIES:
            break
        queries = [{**q, param: value} for q in queries for value in values]
    return queries


def crawl(pool: ThreadPoolExecutor, query: Query) -> tuple[list[dict[str, Any]], set[str]]:
    """The rows of the list queries for `query`, and the fields those rows carry."""
    front: dict[str, str] = {}  # the unfiltered list's first page, read once for its form

    def options() -> dict[str, list[str]]:
        front.setdefault("page", fetch("/gpus"))
        return form_options(front["page"])

    queries = list_queries(query, options)
    firsts = list(pool.map(lambda q: front["page"] if front and not q else fetch("/gpus", q), queries))
    later = [{**q, "page": number} for q, page in zip(queries, firsts) for number in range(2, page_count(page) + 1)]
    pages = [*zip(queries, firsts), *zip(later, pool.map(lambda params: fetch("/gpus", params), later))]
    rows = {row["page"]: row for q, page in pages for row in list_rows(page, q)}
    pinned = {field for field in SITE_FILTERS if queries and field in queries[0]}
    return list(rows.values()), {*LIST_COLUMNS.values(), *pinned}


def open_pages(pool: ThreadPoolExecutor, rows: list[dict[str, Any]]) -> None:
    for row, page in zip(rows, pool.map(fetch, [row["page"] for row in rows])):
        row.update(gpu_fields(page))


# --- the query -------------------------------------------------------------------------------------

def ordered(rows: list[dict[str, Any]], field: str | None, order: str) -> list[dict[str, Any]]:
    """By `field` (text ignoring case), rows lacking it last; ties (and no `field`) by name."""
    rows = sorted(rows, key=lambda row: (row.get("name") or "", row["page"]))
    if field is None:
        return rows
    present = [row for row in rows if row.get(field) is not None]
    key = (lambda row: row[field].lower()) if KINDS[field] == "string" else (lambda row: row[field])
    return sorted(present, key=key, reverse=order == "desc") + [row for row in rows if row.get(field) is None]


def summary(rows: list[dict[str, Any]], fn: str, field: str | None) -> dict[str, Any]:
    if field is None:
        return {"fn": fn, "field": None, "value": len(rows), "rows": len(rows), "missing": 0}
    values = [row[field] for row in rows if row.get(field) is not None]
    value = {
        "count": lambda: len(values),
        "sum": lambda: sum(values),
        "avg": lambda: math.fsum(values) / len(values) if values else None,
        "min": lambda: min(values, default=None),
        "max": lambda: max(values, default=None),
    }[fn]()
    return {"fn": fn, "field": field, "value": value, "rows": len(values), "missing": len(rows) - len(values)}


def gpu_query(**arguments: Any) -> dict[str, Any]:
    """Filter, sort, aggregate and return GPUs of the replica site (see the module's docstring)."""
    try:
        query = checked(arguments)
    except InvalidArguments as error:
        return {"error": {"type": "invalid_arguments", "message": str(error)}}
    with ThreadPoolExecutor(THREADS) as pool:
        rows, known = crawl(pool, query)
        rows = [row for row in rows if all(f.holds(row.get(f.field)) for f in query.filters if f.field in known)]
        needed = {f.field for f in query.filters} | {query.sort_by, query.aggregate[1] if query.aggregate else None}
        if needed - known - {None}:  # filter, sort or aggregate on a field only the GPU pages show
            open_pages(pool, rows)
            known = set(RETURNABLE)
        rows = [row for row in rows if all(f.holds(row.get(f.field)) for f in query.filters)]
        shown = ordered(rows, query.sort_by, query.order)[:query.limit]
        if set(query.fields) - known:
            open_pages(pool, shown)
    result: dict[str, Any] = {
        "matched": len(rows),
        "returned": len(shown),
        "truncated": len(rows) > len(shown),
        "rows": [{**{field: row.get(field) for field in query.fields}, "page": row["page"]} for row in shown],
    }
    if result["truncated"]:
        result["note"] = (f"{len(rows) - len(shown)} more rows matched; narrow the filters, use aggregate, "
                          f"or sort and raise limit (max {MAX_LIMIT})")
    if query.sort_by:
        missing = sum(row.get(query.sort_by) is None for row in rows)
        result["sort"] = {"field": query.sort_by, "order": query.order, "missing": missing}
    if query.aggregate:
        result["aggregate"] = summary(rows, *query.aggregate)
    return result
