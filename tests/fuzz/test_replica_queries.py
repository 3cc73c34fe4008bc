"""Fuzz: every route of every domain's replica, with hostile path values and query strings, answers
below 500.

The apps are driven in-process through ASGI (no sockets): each request is one ASGI call whose
query string is the bytes a client can put on the wire (uvicorn's h11 answers a request target
with any byte outside ! to ~ with its own 400, so other bytes are percent-encoded, as clients do):
percent-encoding junk (%zz, %FF, %00), invalid UTF-8 and unescaped & = ; reach the app as sent.
Routes come from `app.routes`, parameter names from the replica code itself (`params.get("page")`,
`choice(params, "category", ...)`), real values from the app's catalog: a new route, parameter or
domain is fuzzed without editing this file.
"""
from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import logging
import re
import traceback
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from armbench.domains import DOMAINS
from armbench.replicas.serve import load_reference
from armbench.replicas.web import listing
from tests.fuzz.hostile import FUZZ, examples, hostile_value

REQUESTS_PER_SITE = examples(1_000)
SHARED_PARSING = Path(listing.__file__).parent  # armbench/replicas/web: sort, order, page
PARAM_NAME = re.compile(r"""params(?:\.get\(\s*|,\s*)["'](\w+)["']""")
# A catch-all `{path:path}` route (the World Bank API's) gets paths of the API's grammar (routes.py):
# v2/[lang/]resource[/ids], v2/country/ids/indicator/ids, v2/sources/2/concept/ids[/concept/ids]...[/data].
LANGUAGES = ["en", "EN", "fr", "zz", "e1"]
RESOURCES = ["country", "countries", "Countries", "region", "regions", "incomeLevel", "incomelevels",
             "lendingType", "lendingTypes", "indicator", "indicators", "source", "sources", "topic", "x"]
CONCEPTS = ["country", "Country", "series", "SERIES", "time", "Time", "economy", "concepts", "data"]
PATH_WORDS = ["v2", "V2", "v1", "2", "1", "all", "ALL", "YR2020", "yr1960", "YR", "YR99999", "healthz", ".", "..", " "]
# Raw query-string pieces that are not valid percent-encoding or UTF-8.
RAW_PIECES = [b"%", b"%zz", b"%0", b"%00", b"%FF%FE", b"%C2", b"%E2%82", b"%ED%A0%80", b"=", b"==", b"&", b"&&",
              b";", b"+", b"%2B", b"%26", b"%3D", b"a=%", b"page=%C2%B2", b"year=%D9%A3", b"#", b"?", b"[]"]
NOT_ON_THE_WIRE = re.compile(rb"[^\x21-\x7e]")  # what h11 refuses in a request target


@dataclasses.dataclass(frozen=True)
class Request:
    path: str
    query: bytes


def parameter_names(app_reference: str) -> list[str]:
    """Every query parameter the replica's code reads: its own package's and the shared list page's,
    and for a table domain (its site made from domain.yaml) the ones its spec declares."""
    module = importlib.import_module(app_reference.partition(":")[0])
    sources = [*Path(module.__file__).parent.glob("*.py"), *SHARED_PARSING.glob("*.py")]
    names = {name for source in sources for name in PARAM_NAME.findall(source.read_text())}
    kit = getattr(module, "KIT", None)
    if kit is not None:
        names |= {"q", *(f"{field}{end}" for field in kit.spec.site.filters for end in ("", "_min", "_max"))}
    return sorted(names)


def real_tokens(app_reference: str) -> list[str]:
    """Keys and values the app's catalog holds (slugs, symbols, codes, years, category names),
    a spread of at most 30 per field, plus every list page's sort keys."""
    module = importlib.import_module(app_reference.partition(":")[0])
    found: set[str] = set()
    for cls in listing.ListQuery.__subclasses__():
        found.update(cls.COLUMNS)
    kit = getattr(module, "KIT", None)
    if kit is not None:  # a table domain: a spread of each text field's values
        table = kit.tables.load(kit.spec.table)
        for field in kit.spec.fields:
            if field.kind == "text":
                values = table[field.name].drop_nulls().unique(maintain_order=True).to_list()
                found.update(values[:: max(1, len(values) // 30)])
    catalog = getattr(module, "catalog", None)
    if catalog is None:
        return sorted(found)

    def add(value: object, depth: int = 0) -> None:
        if isinstance(value, bool) or depth > 3:
            return
        if isinstance(value, str | int):
            found.add(str(value))
        elif isinstance(value, dict):
            keys = list(value)
            for key in keys[:: max(1, len(keys) // 30)]:
                add(key, depth + 1)
        elif isinstance(value, list | tuple):
            for item in value[:: max(1, len(value) // 30)]:
                add(item, depth + 1)
        elif dataclasses.is_dataclass(value):
            for field in dataclasses.fields(value):
                add(getattr(value, field.name), depth + 1)

    data = catalog()
    for field in dataclasses.fields(data):
        if field.name not in ("table", "frame", "cells"):
            add(getattr(data, field.name))
    return sorted(found)


def routes_of(app) -> list[Route]:
    return [route for route in app.routes if isinstance(route, Route) and "GET" in (route.methods or ())]


def weighted_routes(app) -> list[Route]:
    """Every GET route, those whose endpoint reads the query string 4 times over, those with path
    parameters twice: /healthz and the home redirect still get their share, the list pages most."""
    weighted = []
    for route in routes_of(app):
        reads_query = "query_params" in inspect.getsource(route.endpoint)
        weighted += [route] * (1 + 3 * reads_query + bool(route.param_convertors))
    return weighted


def requests(app, names: list[str], tokens: list[str]) -> st.SearchStrategy[Request]:
    """A GET of one of the app's routes: its path parameters real or junk, then a query string of
    real and random parameter names, each with a hostile or real value, some keys repeated."""
    real = st.sampled_from(tokens) if tokens else st.nothing()
    variant = real.flatmap(lambda t: st.sampled_from([t, t.lower(), t.upper(), f" {t} ", t + "x"]))
    token = st.one_of(variant, variant, st.sampled_from(PATH_WORDS), hostile_value)
    ids = st.lists(token, min_size=1, max_size=3).map(";".join)
    lang = st.one_of(st.just(""), st.sampled_from(LANGUAGES).map(lambda code: code + "/"))
    concept_pairs = st.lists(st.tuples(st.sampled_from(CONCEPTS), ids).map("/".join), min_size=0, max_size=4)
    api_path = st.one_of(
        st.tuples(lang, st.sampled_from(RESOURCES)).map("".join),
        st.tuples(lang, st.sampled_from(RESOURCES), ids).map(lambda p: f"{p[0]}{p[1]}/{p[2]}"),
        st.tuples(lang, ids, st.sampled_from(RESOURCES), ids).map(lambda p: f"{p[0]}country/{p[1]}/{p[2]}/{p[3]}"),
        st.tuples(lang, concept_pairs, st.sampled_from(["", "/data", "/DATA"])).map(
            lambda p: f"{p[0]}sources/2/{'/'.join(p[1])}{p[2]}"),
    ).flatmap(lambda path: st.sampled_from(["v2/", "v2/", "v2/", "V2/", "", "v2//"]).map(lambda v: v + path))
    segments = st.lists(st.one_of(token, st.sampled_from(RESOURCES + CONCEPTS)), min_size=1, max_size=8).map("/".join)
    any_path = st.one_of(api_path, api_path, api_path, segments)

    def fill(route: Route) -> st.SearchStrategy[str]:
        parts = {name: any_path if type(conv).__name__ == "PathConvertor" else st.one_of(variant, hostile_value)
                 for name, conv in route.param_convertors.items()}
        return st.fixed_dictionaries(parts).map(lambda values: route.path_format.format(**values))

    name = st.one_of(st.sampled_from(names), st.sampled_from(names), st.sampled_from(names).map(str.upper),
                     st.text(max_size=12))
    value = st.one_of(hostile_value, variant)
    pair = st.one_of(
        st.tuples(name, value).map(lambda p: f"{quote_plus(p[0])}={quote_plus(p[1])}".encode()),
        st.tuples(name, value).map(lambda p: f"{p[0]}={p[1]}".encode()),  # not encoded: & = # % as they are
        name.map(lambda n: quote_plus(n).encode()),  # a bare key
        st.sampled_from(RAW_PIECES),
        st.binary(max_size=12),
    )
    query = st.lists(pair, max_size=8).flatmap(
        lambda pairs: st.sampled_from([b"&", b";", b"&&"]).map(lambda sep: sep.join(pairs)))
    doubled = query.map(lambda q: q + b"&" + q if q else q)  # every key given twice
    route_path = st.sampled_from(weighted_routes(app)).flatmap(fill)
    return st.builds(Request, route_path, st.one_of(query, query, doubled).map(on_the_wire))


def on_the_wire(query: bytes) -> bytes:
    """The query as a client sends it: bytes outside ! to ~ percent-encoded, the rest as they are."""
    return NOT_ON_THE_WIRE.sub(lambda byte: b"%%%02X" % byte.group()[0], query)


async def answer(app, request: Request) -> tuple[int, bytes, str]:
    """(status, body, traceback or "") of one GET through the app's ASGI interface."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": request.path, "raw_path": quote(request.path, safe="/").encode(), "root_path": "",
        "query_string": request.query, "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
    }
    started: list[int] = []
    body = bytearray()

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            started.append(message["status"])
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    try:
        await app(scope, receive, send)
    except Exception:  # Starlette answers 500 and re-raises: keep the traceback for the report
        return 500, bytes(body), traceback.format_exc()
    return started[0], bytes(body), ""


class Logged(logging.Handler):
    """Error records with a traceback: a replica's catch-all that hid a crash behind a 4xx."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        if record.exc_info:
            self.records.append(record)


@pytest.mark.slow
@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_no_query_string_or_path_value_makes_a_replica_answer_5xx(domain):
    """Property: over 1,000 generated GETs of the domain's replica (every GET route of `app.routes`,
    path parameters filled with real keys or junk, query strings from the parameter names the code
    reads plus random ones, with hostile values: digits of any length and script, signs, floats,
    nan, empty, huge, NUL, percent and UTF-8 junk, repeated keys), every status is below 500 and
    no replica logs a traceback (the World Bank replica's catch-all answers 400 but logs one)."""
    reference = DOMAINS[domain].app
    app = load_reference(reference)()
    names, tokens = parameter_names(reference), real_tokens(reference)
    assert "page" in names, f"no query parameter found in the code of {reference}"
    loop = asyncio.new_event_loop()
    logged = Logged()
    logging.getLogger("armbench").addHandler(logged)
    sent: list[Request] = []

    @settings(FUZZ, max_examples=REQUESTS_PER_SITE)
    @given(requests(app, names, tokens))
    def check(request: Request) -> None:
        sent.append(request)
        logged.records.clear()
        status, _, trace = loop.run_until_complete(answer(app, request))
        asked = f"GET {request.path[:200]!r} ? {request.query[:300]!r}"
        assert status < 500, f"{asked} answered {status}\n{trace}"
        assert not logged.records, f"{asked} logged a traceback: {logged.records[0].getMessage()}"

    try:
        check()
    finally:
        logging.getLogger("armbench").removeHandler(logged)
        loop.close()
    assert len(sent) >= REQUESTS_PER_SITE


# Digits that `str.isdigit`, `int` or `float` may read as an ASCII one: Arabic-Indic, Extended
# Arabic-Indic, Devanagari, Bengali, Thai, full-width and subscript digits (each block runs 0-9),
# and the superscripts.
DIGIT_BLOCKS = [0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0xFF10, 0x2080]
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
PLAIN_NUMBERS = ["1", "2", "2020"]
# Paths of a catch-all route (the World Bank API's) on which its parameters are probed.
CATCH_ALL_PROBES = ["v2/country", "v2/country/USA/indicator/SP.POP.TOTL",
                    "v2/sources/2/series/SP.POP.TOTL/country/USA/time/all"]


def refused(status: int, body: bytes) -> bool:
    """An error page, or the World Bank API's own error message (HTTP 200, message 120)."""
    return status >= 400 or body.startswith(b'[{"message"')


def numeric_parameters(app, names: list[str], get, tokens: list[str]) -> list[tuple[str, str, str]]:
    """(path, parameter, a plain number it takes) for each parameter that refuses "x" and takes
    1, 2 or 2020, on each route that reads the query string (a catch-all route at the World Bank
    paths, another route with its parameters filled by the first real value that makes a page)."""
    paths = []
    for route in routes_of(app):
        if "query_params" not in inspect.getsource(route.endpoint):
            continue
        if not route.param_convertors:
            paths.append(route.path)
        elif any(type(c).__name__ == "PathConvertor" for c in route.param_convertors.values()):
            paths += ["/" + path for path in CATCH_ALL_PROBES]
        else:
            paths += next(([path] for token in tokens if get(path := fill(route.path, token), "")[0] == 200), [])
    found = []
    for path in paths:
        for name in names:
            if not refused(*get(path, f"{name}=x&format=json")[:2]):
                continue
            taken = [n for n in PLAIN_NUMBERS if not refused(*get(path, f"{name}={n}&format=json")[:2])]
            found += [(path, name, taken[0])] if taken else []
    return found


def fill(path: str, token: str) -> str:
    """A route's path with every parameter set to `token`."""
    return re.sub(r"\{[^}]+\}", quote(token, safe=""), path)


def odd_spellings(number: str) -> st.SearchStrategy[str]:
    """`number` with one or more of its digits written in another script."""
    def variants(digit: str) -> list[str]:
        return [digit, SUPERSCRIPTS[int(digit)], *(chr(block + int(digit)) for block in DIGIT_BLOCKS)]

    return st.tuples(*(st.sampled_from(variants(d)) for d in number)).map("".join).filter(lambda s: not s.isascii())


@pytest.mark.slow
@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_a_number_with_a_non_ascii_digit_is_refused_like_any_bad_value(domain):
    """Property: every query parameter that refuses "x" and takes a plain number (found by probing
    the routes that read the query string) also refuses that number with any of its digits written
    in another script (١, ۲, २, ０, ², ₂, ...): a 4xx page or the World Bank API's message 120,
    never a value read as the number."""
    reference = DOMAINS[domain].app
    app = load_reference(reference)()
    loop = asyncio.new_event_loop()

    def get(path: str, query: str) -> tuple[int, bytes, str]:
        return loop.run_until_complete(answer(app, Request(path, query.encode())))

    numeric = numeric_parameters(app, parameter_names(reference), get, real_tokens(reference))
    assert "page" in {name for _, name, _ in numeric}, numeric

    @settings(FUZZ, max_examples=examples(300))
    @given(st.sampled_from(numeric).flatmap(lambda p: st.tuples(st.just(p[0]), st.just(p[1]), odd_spellings(p[2]))))
    def check(probe: tuple[str, str, str]) -> None:
        path, name, spelled = probe
        status, body, trace = get(path, f"{quote_plus(name)}={quote_plus(spelled)}&format=json")
        assert refused(status, body), f"GET {path}?{name}={spelled} was taken as a number ({status})"
        assert status < 500, trace

    try:
        check()
    finally:
        loop.close()
