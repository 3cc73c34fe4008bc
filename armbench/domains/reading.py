"""What every site reader needs (the contract: armbench/domains/parity.py): fetching a page, and
reading text, table rows and labelled lines out of the replicas' markup. Standard library only.

A reader imports it (`from armbench.domains.reading import fetch, text`); inside the python
sandbox, where armbench is not installed, a reader runs as `parity.reader_source(domain)`: this
module's text, then the reader's without that import. So nothing here imports armbench, and a
name defined here is never defined again by a reader.

Regular expressions, not html.parser, for the replicas' own row and cell markup: they are
generated in one fixed shape, and html.parser took longer than fetching a page (about 1 ms a
page, 20 s over one site's fund pages). `Page` (html.parser) is for pages read once or twice,
where headings, links and the parts of a table matter.

The kit reads the real web's frictions too (`bench run --web real`, armbench/web_profile.py), as
a careful reader of a real site does: a 429 or 503 is asked again after the wait its Retry-After
says (with backoff when it says none), a cookie-consent page is accepted with its button and the
page asked for again, and a list the site stops showing ("Refine your search") is read in parts
(`list_pages`), or raises, never reading as shorter than it is. On the kind web none of them
happens, and a page is one request.
"""
from __future__ import annotations

import html
import http.client
import io
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
CELL = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", re.S)
BODY = re.compile(r"<tbody>(.*?)</tbody>", re.S)
TAG = re.compile(r"<[^>]+>")
HEAD = re.compile(r"<head>.*?</head>", re.S)
# Threads reading many pages at once (fetch_pages), each over one kept-alive connection: the sandbox
# may allow a call no more than 8 processes and threads.
PAGE_THREADS = 4
# The real web's answers worth asking again (rate limited, briefly unavailable), how often, and the
# longest wait a Retry-After may ask for.
ASK_AGAIN = {429, 503}
RETRIES = 8
MAX_WAIT_S = 60.0
FORM = re.compile(r'<form[^>]*\baction="([^"]+)"[^>]*>(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
ACCEPT_BUTTON = re.compile(r"<button[^>]*>\s*Accept", re.I)
CAPPED = re.compile(r"<h1[^>]*>\s*Refine your search\s*</h1>")
PAGE_COUNT = re.compile(r"<p>Page 1 of (\d+)</p>")  # a list's first page: how many it has
ROW_LINK = re.compile(r'<th scope="row"><a href="([^"]*)">')  # a list row's entity
SORTED_BY = re.compile(r'<th scope="col"[^>]*aria-sort="[^"]*"[^>]*>\s*<a href="([^"]+)"')  # the other way
SHOWING = re.compile(r"Showing [\d,]+\S[\d,]+ of ([\d,]+)\.")  # a list page's count, "Showing 1–100 of 2,886."
SELECT = re.compile(r'<select[^>]*\bname="([^"]+)"[^>]*>(.*?)</select>', re.S)
OPTION = re.compile(r"<option([^>]*)>(.*?)</option>", re.S)
VALUE = re.compile(r'\bvalue="([^"]*)"')


plain_urlopen = urllib.request.urlopen  # fetch's own, kept when careful_urlopen takes its place


def fetch(url: str, timeout: float = 60) -> str:
    """The page at `url`. An HTTP error raises naming the URL, the status and the start of what
    the page says (its text, without the head's styles), so a failure names its real cause."""
    def ask() -> tuple[int, str | None, bytes]:
        try:
            with plain_urlopen(url, timeout=timeout) as reply:
                return 200, None, reply.read()  # urlopen raises on every HTTP error
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Retry-After"), error.read()

    return carefully(url, ask, timeout)


def carefully(url: str, ask: Callable[[], tuple[int, str | None, bytes]], timeout: float) -> str:
    """The page `ask()` gets (its status, Retry-After and body), read as a careful reader of a real
    site reads it: asked again after a 429 or 503, a consent page accepted, a capped list raised."""
    for attempt in range(RETRIES + 1):
        status, retry_after, body = ask()
        if status in ASK_AGAIN and attempt < RETRIES:
            time.sleep(wait_s(retry_after, attempt))
            continue
        if status != 200:
            raise RuntimeError(f"GET {url}: HTTP {status}: {said(body)}")
        page = body.decode("utf-8", "replace")
        accept = consent(page)
        if accept is None:
            return unless_capped(url, page)
        fetch(urljoin(url, accept), timeout)  # accepted for the whole run: the page asked again
    raise RuntimeError(f"GET {url}: no page after {RETRIES + 1} tries")


def careful_urlopen(url: str, timeout: float = 60) -> io.BytesIO:
    """urllib's urlopen as `fetch` reads (frictions met), for a script that opens pages itself:
    the page as a file to read (json.load, .read())."""
    return io.BytesIO(fetch(url, timeout).encode("utf-8"))


def wait_s(retry_after: str | None, attempt: int) -> float:
    """How long to wait before asking again: what the site's Retry-After says (in seconds), else a
    backoff doubling from a quarter of a second; never more than MAX_WAIT_S."""
    try:
        asked = float(retry_after) if retry_after is not None else 0.25 * 2**attempt
    except ValueError:
        asked = 0.25 * 2**attempt
    return min(asked, MAX_WAIT_S) if asked >= 0 else 0.0  # NaN too


def consent(page: str) -> str | None:
    """A cookie-consent page's "Accept" form as a URL (its action and hidden fields), or None."""
    for action, form in FORM.findall(page):
        if ACCEPT_BUTTON.search(form):
            fields = {name: html.unescape(value) for name, value in HIDDEN.findall(form)}
            return html.unescape(action) + ("?" + urlencode(fields) if fields else "")
    return None


class ListCapped(RuntimeError):
    """The site shows no more of a list ("Refine your search"): `list_pages` reads it in parts."""


def unless_capped(url: str, page: str) -> str:
    """The page, unless the site says it no longer shows this far into a list."""
    if CAPPED.search(page):
        raise ListCapped(f"GET {url}: the site shows no more of this list (\"Refine your search\"): "
                         "read it in parts with the list's filters")
    return page


def said(body: bytes) -> str:
    """The start of what an error page says: its text, without the head's styles."""
    return text(TAG.sub(" ", HEAD.sub(" ", body.decode("utf-8", "replace"))))[:300]


def fetch_pages(base: str, paths: list[str], timeout: float = 60) -> list[str]:
    """The pages at `base` + each of `paths`, in order, read by PAGE_THREADS threads, each over one
    kept-alive connection (a connection per page would double the server's work), opened again
    once when the server has closed it. An HTTP error raises as in `fetch`."""
    def read_share(share: list[str]) -> list[str]:
        pages, connection = [], None
        try:
            for path in share:
                for last_try in (False, True):
                    connection = connection or http.client.HTTPConnection(urlsplit(base).netloc, timeout=timeout)
                    try:
                        pages.append(get(connection, path))
                        break
                    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                        connection.close()
                        connection = None
                        if last_try:
                            raise
        finally:
            if connection is not None:
                connection.close()
        return pages

    def get(connection: http.client.HTTPConnection, path: str) -> str:
        def ask() -> tuple[int, str | None, bytes]:
            connection.request("GET", urlsplit(base).path + path)
            reply = connection.getresponse()
            return reply.status, reply.getheader("Retry-After"), reply.read()

        return carefully(base + path, ask, timeout)

    pages = [""] * len(paths)
    with ThreadPoolExecutor(PAGE_THREADS) as pool:
        shares = pool.map(read_share, [paths[thread::PAGE_THREADS] for thread in range(PAGE_THREADS)])
        for thread, share in enumerate(shares):
            pages[thread::PAGE_THREADS] = share
    return pages


def list_query(scope: dict | None, filters: dict[str, str]) -> str:
    """A list's query string for a scope (a derived solution's rows wanted, field -> value): each
    field the list filters on (`filters`: field -> the list's parameter) with its value; "" for none."""
    return urlencode({filters[name]: value for name, value in (scope or {}).items() if name in filters})


def list_links(base: str, path: str, link: str) -> list[str]:
    """The entity links (`link`, a pattern whose group is the href) of every page of a list the
    replicas' web kit renders, from `path` (`list_pages`)."""
    return [found for page in list_pages(base, path) for found in re.findall(link, page)]


def list_pages(base: str, path: str) -> list[str]:
    """Every page of a list the replicas' web kit renders, from `path` (its first page): the rest,
    which it counts ("Page 1 of N"), read at once (fetch_pages). A list the site shows only the
    first pages of is read in parts (`in_parts`)."""
    first = fetch(base + path)
    count = PAGE_COUNT.search(first)
    if count is None:
        raise RuntimeError(f"GET {base}{path}: no page count (\"Page 1 of N\"): not a list page of the site")
    try:
        return [first, *fetch_pages(base, [with_query(path, "page", str(number))
                                           for number in range(2, int(count[1]) + 1)])]
    except ListCapped:
        return in_parts(base, path, first)


def in_parts(base: str, path: str, first: str) -> list[str]:
    """A capped list's pages, read in parts: for the select of its filter form with the fewest
    options not set yet, the list at each option (a part capped too is read in parts again); kept
    when the parts hold each of the list's entities ("of N") once, else the next select is tried
    (one whose options leave out the entities with no value, or hold some twice); last, the list
    from both ends (`from_both_ends`)."""
    shown = SHOWING.search(first)
    if shown is None:
        raise RuntimeError(f"GET {base}{path}: a capped list that does not say how long it is (\"of N\")")
    total, asked = whole(shown[1]), dict(parse_qsl(urlsplit(path).query))
    for name, options in sorted(SELECT.findall(first), key=lambda select: select[1].count("<option")):
        if name in asked:
            continue
        parts = [page for value in option_values(options) for page in list_pages(base, with_query(path, name, value))]
        rows = [row for page in parts for row in ROW_LINK.findall(page)]
        if len(rows) == len(set(rows)) == total:
            return parts
    both_ends = from_both_ends(base, path, first)
    if len({row for page in both_ends for row in ROW_LINK.findall(page)}) == total:
        return both_ends
    raise RuntimeError(f"GET {base}{path}: the site shows only the first pages of this list of {total}, "
                       "and neither a filter of its form nor its two sort orders give them all")


def from_both_ends(base: str, path: str, first: str) -> list[str]:
    """A capped list's pages from its start and, sorted the other way (the sorted column's header
    link), from its end, each row once: all of it when it is at most twice what the site shows."""
    reverse = SORTED_BY.search(first)
    if reverse is None:
        return []
    pages, seen = [], set()
    for page in [*shown_pages(base, path, first), *shown_pages(base, html.unescape(reverse[1]))]:
        pages.append(without_rows(page, seen))
        seen |= set(ROW_LINK.findall(page))
    return pages


def without_rows(page: str, entities: set[str]) -> str:
    """The list page without its rows of `entities` (their links)."""
    return ROW.sub(lambda row: "" if entities & set(ROW_LINK.findall(row[0])) else row[0], page)


def shown_pages(base: str, path: str, first: str | None = None) -> list[str]:
    """The pages of a list the site shows, from its first (`first`, when read already) up to its cap."""
    pages = [first or fetch(base + path)]
    count = PAGE_COUNT.search(pages[0])
    for number in range(2, int(count[1]) + 1 if count else 1):
        try:
            pages.append(fetch(base + with_query(path, "page", str(number))))
        except ListCapped:
            break
    return pages


def option_values(select: str) -> list[str]:
    """A select's option values (an option's text when it has no value), but "" (any)."""
    values = []
    for attributes, shown in OPTION.findall(select):
        given = VALUE.search(attributes)
        value = html.unescape(given[1]) if given else text(shown)
        if value:
            values.append(value)
    return values


def with_query(path: str, name: str, value: str) -> str:
    """`path` asking for `name`=`value` (and for its first page, unless `name` is "page")."""
    parts = urlsplit(path)
    query = [(key, old) for key, old in parse_qsl(parts.query, keep_blank_values=True) if key not in (name, "page")]
    return parts.path + "?" + urlencode([*query, (name, value)])


def whole(shown: str) -> int:
    return int(shown.replace(",", ""))


def text(fragment: str) -> str:
    """Markup as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(TAG.sub("", fragment)).split())


def table_rows(fragment: str) -> list[list[str]]:
    """The text of each cell of each table row in `fragment`."""
    return [[text(cell) for cell in CELL.findall(row)] for row in ROW.findall(fragment)]


def body_rows(page: str) -> list[list[str]]:
    """The rows of the page's table bodies (their header rows left out)."""
    return [row for body in BODY.findall(page) for row in table_rows(body)]


def labelled_lines(page: str) -> dict[str, str]:
    """A page whose tables are label-value lines (an entity's page), label -> value."""
    return {row[0]: row[1] for row in table_rows(page) if len(row) >= 2}


class Page(HTMLParser):
    """A page's text, headings, links (href, text) and tables (head, body and foot rows, each a
    list of cell texts), whitespace collapsed."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.tables: list[dict[str, list[list[str]]]] = []
        self._text: list[str] = []
        self._part = "body"
        self._cell: list[str] | None = None  # the text of the cell or heading being read
        self._href: str | None = None  # the link being read, and its text
        self._link: list[str] = []
        self.feed(markup)
        self.close()
        self.text = squeeze(self._text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"head": [], "body": [], "foot": []})
            self._part = "body"
        elif tag in ("thead", "tbody", "tfoot"):
            self._part = tag[1:]
        elif tag == "tr":
            self.tables[-1][self._part].append([])
        elif tag in ("th", "td", "h1", "h2"):
            self._cell = []
        elif tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._link = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.tables[-1][self._part][-1].append(squeeze(self._cell))
            self._cell = None
        elif tag in ("h1", "h2") and self._cell is not None:
            self.headings.append(squeeze(self._cell))
            self._cell = None
        elif tag == "a" and self._href is not None:
            self.links.append((self._href, squeeze(self._link)))
            self._href = None

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._href is not None:
            self._link.append(data)


def squeeze(parts: list[str]) -> str:
    return " ".join("".join(parts).split())
