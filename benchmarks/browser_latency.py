"""Latency of the browser tools: ~100 navigate / snapshot / click calls through `Tool.invoke`.

Runs on the GPU replica and on small pages served here, so browser overhead and replica page weight can be told apart. Run
`python benchmarks/browser_latency.py`; other scripts can import `measure`.
"""
from __future__ import annotations

import asyncio
import os
import re
import statistics
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from figures import record

from armbench.domains import DOMAINS
from armbench.replicas.supervisor import replicas_running
from armbench.tools.browser import Browser
from armbench.tools.browser_tools import browser_tools

TARGET_P50_MS = 150.0
WARMUP_ACTIONS = 6
# A same-site link in a snapshot: `- link "Name" [ref=e12] ...:` then `  - /url: /path`.
LINK = re.compile(r'- link "[^"\n]*" \[ref=(\w+)\][^\n]*\n\s*- /url: (/[^\n]*)')


class LocalPages(BaseHTTPRequestHandler):
    """A home page with 20 links, and 20 item pages of a small spec table each."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path.startswith("/item/"):
            n = path.rsplit("/", 1)[-1]
            rows = "".join(f"<tr><th>Spec {k}</th><td>{k * 7} units</td></tr>" for k in range(10))
            table = f"<table>{rows}</table>"
            html = f'<title>Item {n}</title><h1>Item {n}</h1>{table}<a href="/">Home</a>'
        else:
            links = "".join(f'<li><a href="/item/{n}">Item {n}</a></li>' for n in range(20))
            html = f"<title>Items</title><h1>Items</h1><ul>{links}</ul>"
        body = html.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_local_pages() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), LocalPages)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


async def time_actions(start_url: str, actions: int, kept: bool = False) -> list[tuple[str, float]]:
    """Cycles navigate(start) -> snapshot -> click the k-th same-site link; (tool, seconds) per
    call, in order, warm-up calls dropped."""
    timings: list[tuple[str, float]] = []
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(start_url))
    async with Browser(warm=kept) as browser:
        session = await browser.new_session([origin])
        tools = {tool.name: tool for tool in browser_tools(session)}

        async def timed(name: str, **arguments: Any) -> dict[str, Any]:
            began = time.perf_counter()
            outcome = await tools[name].invoke(arguments)
            timings.append((name, time.perf_counter() - began))
            if outcome.is_error:
                raise RuntimeError(f"{name}({arguments}) failed: {outcome.result}")
            return outcome.result

        k = 0
        while len(timings) < actions + WARMUP_ACTIONS:
            await timed("browser_navigate", url=start_url)
            page = await timed("browser_snapshot")
            links = LINK.findall(page["snapshot"])
            if not links:
                raise RuntimeError(f"no same-site link on {page['url']} to click")
            await timed("browser_click", ref=links[k % len(links)][0])
            k += 7  # spread the clicks over the page's links
        await session.close()
    return timings[WARMUP_ACTIONS : WARMUP_ACTIONS + actions]


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(start_url: str | None = None, actions: int = 100, kept: bool = False) -> dict[str, Any]:
    """Timings on `start_url`'s site, or on small local pages when None; with `kept`, on the Chromium
    a process keeps between run sets, whose steps run on a thread of its own (chromium_host.py)."""
    server = None
    if start_url is None:
        server, start_url = serve_local_pages()
    try:
        timings = asyncio.run(time_actions(start_url, actions, kept))
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
    ordered_ms = sorted(seconds * 1000 for _, seconds in timings)
    by_tool: dict[str, list[float]] = defaultdict(list)
    for name, seconds in timings:
        by_tool[name].append(seconds * 1000)
    return {
        "site": start_url + (" (kept Chromium)" if kept else ""),
        "actions": len(timings),
        "p50_ms": statistics.median(ordered_ms),
        "p95_ms": percentile(ordered_ms, 0.95),
        "max_ms": ordered_ms[-1],
        "p50_ms_by_tool": {name: statistics.median(ms) for name, ms in by_tool.items()},
        "target_p50_ms": TARGET_P50_MS,
        "load_avg_1m": os.getloadavg()[0],  # browser figures swing with other work on the host
        "cpus": os.cpu_count(),
    }


def report(m: dict[str, Any]) -> str:
    verdict = "ok" if m["p50_ms"] <= TARGET_P50_MS else "OVER TARGET"
    by_tool = ", ".join(f"{name} {ms:.0f}" for name, ms in m["p50_ms_by_tool"].items())
    return (
        f"browser: {m['actions']} actions, p50 {m['p50_ms']:.0f} ms, p95 {m['p95_ms']:.0f} ms "
        f"(target p50 <= {TARGET_P50_MS:g} ms: {verdict}) on {m['site']}\n"
        f"  p50 by tool (ms): {by_tool}; max {m['max_ms']:.0f} ms; "
        f"load average {m['load_avg_1m']:.1f} on {m['cpus']} CPUs"
    )


def main() -> None:
    with replicas_running([DOMAINS["gpus"].replica]) as endpoints:
        listed = measure(endpoints["gpus"].base_url + "/")
    print(report(listed))
    record("browser action p50, GPU list page", listed["p50_ms"], "ms", TARGET_P50_MS)
    small = measure()
    print(report(small))
    record("browser action p50, a small page", small["p50_ms"], "ms")
    kept = measure(kept=True)  # each step crosses to the kept Chromium's thread and back
    print(report(kept))
    record("browser action p50, a small page, kept Chromium", kept["p50_ms"], "ms")


if __name__ == "__main__":
    main()
