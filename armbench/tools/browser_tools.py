"""The browser tools (Playwright MCP's action space): navigate, snapshot, click, type, select, back.

Each is bound to one run's BrowserSession and returns the page afterwards as
{url, title, snapshot}: the snapshot is the page's accessibility tree with element refs, cut to
MAX_SNAPSHOT_CHARS; when cut, `truncated`, `total_chars`, `next_offset` and a `notice` say so.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from armbench.tools.base import Tool, ToolError
from armbench.tools.browser import BrowserSession, PageView

MAX_SNAPSHOT_CHARS = 12_000
MAX_TITLE_CHARS = 300
# Where the description examples show the replica: each tool fills in its run's replica address, so
# no port is written here and the examples follow the port base.
EXAMPLE_ORIGIN = "http://127.0.0.1:<port>"

RESULT = f"""\
Result: {{"url", "title", "snapshot"}}: the page afterwards. The snapshot is the page's \
accessibility tree, one element per line, e.g. `- link "Next page" [ref=e12]` followed by its \
`/url`; pass a ref (e12) to browser_click, browser_type or browser_select. Refs come from the \
latest snapshot of the current page. A snapshot longer than {MAX_SNAPSHOT_CHARS:,} characters is \
cut: then "truncated": true, "total_chars", "next_offset" and a "notice" say how to read on with \
browser_snapshot(offset). Only the benchmark's sites can be reached; a step that takes too long \
stops with a timeout error. Mistakes return {{"error": {{"type", "message"}}}}."""


def observation(view: PageView, offset: int = 0) -> dict[str, Any]:
    """The view with its snapshot cut to MAX_SNAPSHOT_CHARS from `offset`, at a line end unless
    that would drop more than half the chunk (a single huge line)."""
    text, total = view.snapshot, len(view.snapshot)
    if offset and offset >= total:
        raise ToolError(
            "bad_offset",
            f"offset {offset:,} is past the end of the snapshot ({total:,} characters)",
        )
    end = offset + MAX_SNAPSHOT_CHARS
    if end < total:
        line_end = text.rfind("\n", offset + MAX_SNAPSHOT_CHARS // 2, end)
        end = line_end + 1 if line_end != -1 else end
    end = min(end, total)
    result: dict[str, Any] = {
        "url": view.url,
        "title": view.title[:MAX_TITLE_CHARS],
        "snapshot": text[offset:end],
    }
    if offset or end < total:
        more = (
            f"call browser_snapshot with offset={end} for the rest"
            if end < total
            else "that is the end"
        )
        result |= {
            "truncated": True,
            "total_chars": total,
            **({"next_offset": end} if end < total else {}),
            "notice": f"snapshot cut: showing characters {offset:,}-{end:,} of {total:,}; {more}",
        }
    return result


class BrowserTool(Tool):
    def __init__(self, session: BrowserSession, origin: str = EXAMPLE_ORIGIN):
        """`origin`: the run's replica, which the examples show (the class description shows the default)."""
        self.session = session
        self.description = type(self).description.replace(EXAMPLE_ORIGIN, origin.rstrip("/"))


class NavigateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="A full URL (http://host:port/path?query) or a path relative to the current "
        "page."
    )


class BrowserNavigate(BrowserTool):
    name = "browser_navigate"
    description = f"""\
Open a URL in the browser tab (like typing it into the address bar).

{RESULT}

Example: {{"url": "{EXAMPLE_ORIGIN}/products?page=2"}}
-> {{"url": "{EXAMPLE_ORIGIN}/products?page=2", "title": "Products, page 2", \
"snapshot": "- heading \\"Products\\" [level=1] [ref=e2]\\n- link \\"Next page\\" [ref=e12] \
[cursor=pointer]:\\n  - /url: /products?page=3\\n..."}}"""
    Args = NavigateArgs

    async def run(self, args: NavigateArgs) -> dict[str, Any]:
        return observation(await self.session.navigate(args.url))


class SnapshotArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offset: int = Field(
        0, ge=0, description="Character to start from: a previous result's next_offset; 0 = start."
    )


class BrowserSnapshot(BrowserTool):
    name = "browser_snapshot"
    description = f"""\
Read the current page again, from its start or from `offset` (to read on after a cut snapshot).

{RESULT}

Example, after a result with "next_offset": 11890: {{"offset": 11890}}
-> {{"url": "...", "title": "...", "snapshot": "  - row \\"...\\" [ref=e340]:\\n...", \
"truncated": true, "total_chars": 31202, "next_offset": 23870, "notice": "snapshot cut: showing \
characters 11,890-23,870 of 31,202; call browser_snapshot with offset=23870 for the rest"}}"""
    Args = SnapshotArgs

    async def run(self, args: SnapshotArgs) -> dict[str, Any]:
        return observation(await self.session.snapshot(), args.offset)


REF = Field(description='An element ref from the latest snapshot, e.g. "e12".')


class ClickArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str = REF


class BrowserClick(BrowserTool):
    name = "browser_click"
    description = f"""\
Click an element (a link, button, checkbox, ...) by its ref from the latest snapshot.

{RESULT}

Example, for the snapshot line `- link "GeForce RTX 4090" [ref=e31]`: {{"ref": "e31"}}
-> {{"url": "{EXAMPLE_ORIGIN}/gpus/geforce-rtx-4090", "title": "GeForce RTX 4090", \
"snapshot": "..."}}"""
    Args = ClickArgs

    async def run(self, args: ClickArgs) -> dict[str, Any]:
        return observation(await self.session.click(args.ref))


class TypeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str = REF
    text: str = Field(description="Text to put in the field; it replaces what the field held.")
    submit: bool = Field(False, description="Press Enter afterwards (submits a search form).")


class BrowserType(BrowserTool):
    name = "browser_type"
    description = f"""\
Type text into a text field (textbox, searchbox) by its ref, replacing its content; \
submit=true presses Enter afterwards.

{RESULT}

Example, for the snapshot line `- searchbox "Search" [ref=e5]`: \
{{"ref": "e5", "text": "radeon", "submit": true}}
-> {{"url": "{EXAMPLE_ORIGIN}/search?q=radeon", "title": "Results for radeon", \
"snapshot": "..."}}"""
    Args = TypeArgs

    async def run(self, args: TypeArgs) -> dict[str, Any]:
        return observation(await self.session.type(args.ref, args.text, args.submit))


class SelectArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str = Field(description='The ref of a combobox (a <select>) in the latest snapshot.')
    value: str = Field(description="The option to choose: its label as the snapshot shows it.")


class BrowserSelect(BrowserTool):
    name = "browser_select"
    description = f"""\
Choose an option of a dropdown (a combobox in the snapshot) by its ref.

{RESULT}

Example, for the snapshot lines `- combobox "Sort by" [ref=e7]:` / `- option "Name" [selected]` \
/ `- option "Release date"`: {{"ref": "e7", "value": "Release date"}}
-> {{"url": "...", "title": "...", "snapshot": "...- option \\"Release date\\" [selected]..."}}"""
    Args = SelectArgs

    async def run(self, args: SelectArgs) -> dict[str, Any]:
        return observation(await self.session.select(args.ref, args.value))


class BackArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BrowserBack(BrowserTool):
    name = "browser_back"
    description = f"""\
Go back to the previous page in this tab (the browser's Back button).

{RESULT}

Example: {{}}
-> {{"url": "{EXAMPLE_ORIGIN}/products", "title": "Products", "snapshot": "..."}}"""
    Args = BackArgs

    async def run(self, args: BackArgs) -> dict[str, Any]:
        return observation(await self.session.back())


BROWSER_TOOLS: list[type[BrowserTool]] = [
    BrowserNavigate,
    BrowserSnapshot,
    BrowserClick,
    BrowserType,
    BrowserSelect,
    BrowserBack,
]


def browser_tools(session: BrowserSession, origin: str = EXAMPLE_ORIGIN) -> list[Tool]:
    return [cls(session, origin) for cls in BROWSER_TOOLS]
