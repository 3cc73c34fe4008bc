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
"""
from __future__ import annotations

import html
import http.client
import re
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from urllib.parse import urlencode, urlsplit

ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
CELL = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", re.S)
BODY = re.compile(r"<tbody>(.*?)</tbody>", re.S)
TAG = re.compile(r"<[^>]+>")
HEAD = re.compile(r"<head>.*?</head>", re.S)
NEXT = re.compile(r'<a href="([^"]+)" rel="next">')  # a list page's link to the next (replicas/web)
# Threads reading many pages at once (fetch_pages), each over one kept-alive connection: the sandbox
# may allow a call no more than 8 processes and threads.
PAGE_THREADS = 4


def fetch(url: str, timeout: float = 60) -> str:
    """The page at `url`. An HTTP error raises naming the URL, the status and the start of what
    the page says (its text, without the head's styles), so a failure names its real cause."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return reply.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        said = text(TAG.sub(" ", HEAD.sub(" ", error.read().decode("utf-8", "replace"))))
        raise RuntimeError(f"GET {url}: HTTP {error.code}: {said[:300]}") from None


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
        connection.request("GET", urlsplit(base).path + path)
        reply = connection.getresponse()
        body = reply.read().decode("utf-8", "replace")
        if reply.status != 200:
            said = text(TAG.sub(" ", HEAD.sub(" ", body)))
            raise RuntimeError(f"GET {base}{path}: HTTP {reply.status}: {said[:300]}")
        return body

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
    replicas' web kit renders, following "Next" from `path`."""
    links, url = [], base + path
    while url:
        page = fetch(url)
        links += re.findall(link, page)
        after = NEXT.search(page)
        url = after and base + text(after[1])  # the href's "&amp;" as "&"
    return links


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
