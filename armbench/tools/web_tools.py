"""The browsing arm's non-browser tools: `python` (code in the sandbox) and `http_get`.

Both reach the replicas only: `python` through the sandbox's network namespace (tools/sandbox.py),
`http_get` by refusing, before any request, a URL or redirect outside the allowed origins. Each
tool's description is rendered from its own limits and origins, so it is exact per instance.
"""
from __future__ import annotations

import asyncio
import codecs
from collections.abc import Iterable, Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from armbench.tools.base import Tool, ToolError, ToolInfraError
from armbench.tools.browser_tools import EXAMPLE_ORIGIN
from armbench.tools.call_usage import charge
from armbench.tools.replica_gate import ReplicaShare, gated
from armbench.tools.sandbox import (
    BWRAP,
    ReplicaRoute,
    SandboxConfig,
    SandboxResult,
    call_caps,
    isolation_mode,
    run_python,
)

PYTHON_DESCRIPTION = """\
Run a Python 3 script in a fresh, isolated sandbox and get what it prints. Every call is a new \
process: variables, imports and files do not carry over between calls.

Inside: the standard library only (urllib.request, json, re, html.parser, csv, ...). Network: \
only this task's replica sites, at their usual URLs http://127.0.0.1:<port>/...; every other \
address (the internet, DNS, other ports) is unreachable.
Limits: {wall:g} s wall clock, {cpu} s CPU, {memory} MiB memory, {processes} processes and \
threads, files up to {file_size} MiB; writable: the working directory /work and /tmp \
({disk} MiB each). stdout and stderr are each cut after {chars:,} characters, so print what you \
need (a slice, a count, the matching rows), not whole pages.

Result: {{"stdout", "stderr", "exit_code" (0 = success), "timed_out", "notice" (only when the \
script was killed or its output cut)}}.

Example, as the `code` argument: fetch a page and print its title.
import re, urllib.request
with urllib.request.urlopen("{example}/", timeout=10) as response:
    html = response.read().decode()
print(response.status, len(html))
print(re.search(r"<title>(.*?)</title>", html, re.S).group(1))
"""

HTTP_GET_DESCRIPTION = """\
Fetch one URL of this task's replica sites with an HTTP GET and return the response body as \
text (HTML, JSON, ...). Allowed origins: {origins}. Any other URL is refused without a request; \
redirects are followed (at most {redirects}) while they stay on an allowed origin.

Result: {{"url" (after redirects), "status", "content_type", "body", "truncated", "notice" (when \
the body was cut)}}. The body holds at most {chars:,} characters from `offset` (default 0); when \
`truncated` is true, call again with the same url and the `offset` the notice gives.

Example: {{"url": "{example}/", "offset": 0}}
"""

MAX_REDIRECTS = 5
FETCH_TIMEOUT_S = 10.0  # per read: a server that goes quiet
CALL_DEADLINE_S = 30.0  # per call: a body that trickles in, redirects included
BODY_CHARS = 20_000
MAX_FETCH_BYTES = 10_000_000
TEXT_MARKERS = ("text/", "json", "xml", "javascript", "csv")
LIMITS = ("wall_timeout", "cpu_limit", "memory_limit", "starved")  # killed_reasons that are the sandbox's limits


class PythonArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="A Python 3 script; print the results you want to see.")


class PythonTool(Tool):
    name = "python"
    Args = PythonArgs

    def __init__(self, routes: Sequence[ReplicaRoute] = (), config: SandboxConfig | None = None):
        self.config = (config or SandboxConfig()).model_copy(update={"replicas": list(routes)})
        self.isolation = isolation_mode(self.config)  # refuses now, not in the middle of a run
        self.call_caps = call_caps(self.config)
        self.share = ReplicaShare()  # one per run: see ArmEnvironment.open_arm
        c = self.config
        self.description = PYTHON_DESCRIPTION.format(
            wall=c.wall_timeout_s,
            cpu=c.cpu_s,
            memory=c.memory_bytes >> 20,
            processes=c.processes,
            file_size=c.file_size_bytes >> 20,
            disk=c.disk_bytes >> 20,
            chars=c.output_chars,
            example=f"http://127.0.0.1:{routes[0].port}" if routes else EXAMPLE_ORIGIN,
        )

    async def execute(self, code: str, **limits: Any) -> SandboxResult:
        """Run `code` in this tool's sandbox, held to the run's share of the replicas; `limits`
        override SandboxConfig fields for this call (a synthesized tool's own timeout). Its figures
        go to the call's meter; a call the machine starved raises ToolInfraError."""
        config = self.config.model_copy(update=limits)
        if self.isolation == BWRAP:
            async with gated(config.replicas, self.share) as routes:
                ran = await run_python(code, config.model_copy(update={"replicas": routes}), self.share.waited_s)
        else:  # the fallback has no network namespace: a relay would hold back nothing
            ran = await run_python(code, config)
        limit = ran.killed_reason if ran.killed_reason in LIMITS else None
        charge(cpu_seconds=ran.cpu_seconds, limit=limit)  # its queue seconds were charged as it left the queue
        if ran.killed_reason == "starved":
            raise ToolInfraError(
                f"the sandbox call was starved: after {ran.duration_s:.0f} s it had run {ran.cpu_seconds or 0:.1f} s "
                f"of CPU and waited {ran.held_seconds:.0f} s for a CPU or a busy replica, short of its "
                f"{config.wall_timeout_s:g} s limit in its own time (the machine is overloaded; resume to run it again)"
            )
        return ran

    async def run(self, args: PythonArgs) -> dict[str, Any]:
        ran = await self.execute(args.code)
        result: dict[str, Any] = {
            "stdout": ran.stdout,
            "stderr": ran.stderr,
            "exit_code": ran.exit_code,
            "timed_out": ran.timed_out,
        }
        notices = []
        if ran.killed_reason == "wall_timeout":
            notices.append(
                f"killed at the {self.config.wall_timeout_s:g} s wall-clock limit (output so far "
                "is shown); do less per call or set timeouts on requests"
            )
        elif ran.killed_reason == "cpu_limit":
            notices.append(f"killed at the {self.config.cpu_s} s CPU limit")
        elif ran.killed_reason == "memory_limit":
            notices.append(
                f"a process was killed at the {self.config.memory_bytes >> 20} MiB memory limit, "
                "which all of a call's processes and files share; use less memory per call"
            )
        elif ran.killed_reason:
            notices.append(f"killed by {ran.killed_reason.removeprefix('signal ')}")
        if ran.stdout_truncated or ran.stderr_truncated:
            notices.append(
                f"output cut to {self.config.output_chars:,} characters per stream; "
                "print a slice or a summary instead"
            )
        if notices:
            result["notice"] = "; ".join(notices)
        return result


class HttpGetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Absolute http URL on an allowed origin.")
    offset: int = Field(0, ge=0, description="Character of the body to start from (paging).")


class HttpGetTool(Tool):
    name = "http_get"
    Args = HttpGetArgs

    def __init__(self, origins: Iterable[str], deadline_s: float = CALL_DEADLINE_S,
                 headers: dict[str, str] | None = None):
        self.deadline_s = deadline_s
        self.headers = headers or {}  # what each request carries: the run's web profile
        self.origins = [origin.rstrip("/") for origin in origins]
        self.allowed = {origin_of(httpx.URL(origin)) for origin in self.origins}
        self.description = HTTP_GET_DESCRIPTION.format(
            origins=", ".join(self.origins) or "(none)",
            redirects=MAX_REDIRECTS,
            chars=BODY_CHARS,
            example=self.origins[0] if self.origins else EXAMPLE_ORIGIN,
        )

    async def run(self, args: HttpGetArgs) -> dict[str, Any]:
        try:
            async with asyncio.timeout(self.deadline_s):
                return await self.fetch(args)
        except TimeoutError:
            raise ToolError("timeout", f"{args.url}: no complete answer within {self.deadline_s:g} s") from None

    async def fetch(self, args: HttpGetArgs) -> dict[str, Any]:
        url = self.checked(args.url, "origin_not_allowed")
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S, trust_env=False) as client:
            for _ in range(MAX_REDIRECTS + 1):
                try:
                    async with client.stream("GET", url, headers=self.headers) as response:
                        if not response.is_redirect:
                            return await page_result(response, args.offset)
                        location = response.headers["location"]
                except httpx.TimeoutException:
                    raise ToolError("timeout", f"{url} did not answer in {FETCH_TIMEOUT_S:g} s") from None
                except (httpx.HTTPError, httpx.InvalidURL) as error:  # InvalidURL: a Location httpx cannot read
                    raise ToolError("fetch_failed", f"{url}: {type(error).__name__}: {error}") from None
                url = self.checked(str(url.join(location)), "redirect_not_allowed")
        raise ToolError("too_many_redirects", f"over {MAX_REDIRECTS} redirects from {args.url}")

    def checked(self, url: str, kind: str) -> httpx.URL:
        try:
            parsed = httpx.URL(url)
            allowed = origin_of(parsed) in self.allowed
        except (httpx.InvalidURL, ValueError):
            allowed = False
        if not allowed:
            raise ToolError(
                kind,
                f"{url} is not on an allowed origin; allowed: {', '.join(self.origins)} "
                "(use an absolute URL on one of them)",
                allowed_origins=self.origins,
            )
        return parsed


def origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
    if url.scheme not in ("http", "https"):
        raise ValueError(f"not an http URL: {url}")
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


async def page_result(response: httpx.Response, offset: int) -> dict[str, Any]:
    raw, complete = bytearray(), True
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) > MAX_FETCH_BYTES:
            del raw[MAX_FETCH_BYTES:]
            complete = False
            break
    content_type = response.headers.get("content-type", "")
    result: dict[str, Any] = {
        "url": str(response.url),
        "status": response.status_code,
        "content_type": content_type,
    }
    if content_type and not any(marker in content_type for marker in TEXT_MARKERS):
        return {**result, "body": "", "truncated": False, "notice": "binary content, not shown"}
    text = decode(bytes(raw), response.charset_encoding)
    if offset and offset >= len(text):
        raise ToolError(
            "offset_out_of_range", f"offset {offset:,} is past the body's end ({len(text):,} chars)"
        )
    end = min(offset + BODY_CHARS, len(text))
    result.update(body=text[offset:end], truncated=end < len(text))
    notes = []
    if end < len(text):
        notes.append(
            f"showing characters {offset:,}-{end:,} of {len(text):,}; "
            f"call again with offset={end} for the next part"
        )
    if not complete:
        notes.append(f"the page is over {MAX_FETCH_BYTES:,} bytes; only its start can be read")
    if notes:
        result["notice"] = "; ".join(notes)
    return result


def decode(raw: bytes, charset: str | None) -> str:
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return raw.decode(codec, "replace")


def web_tools(routes: Sequence[ReplicaRoute], config: SandboxConfig | None = None,
              headers: dict[str, str] | None = None) -> list[Tool]:
    """The python and http_get tools for these replicas (reached at http://127.0.0.1:<port>),
    whose requests carry `headers` (the run's web profile)."""
    origins = [f"http://127.0.0.1:{route.port}" for route in routes]
    routes = [route.model_copy(update={"headers": headers}) for route in routes] if headers else routes
    return [PythonTool(routes, config), HttpGetTool(origins, headers=headers)]
