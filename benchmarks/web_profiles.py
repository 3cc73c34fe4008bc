"""What each web profile costs the browsing arm on the GPU list page: navigation latency (p50, p95)
and the tokens of its whole snapshot (every chunk a model would page through: a browser tool's
answer is cut at MAX_SNAPSHOT_CHARS), per built-in profile (`bench run --web`; docs/web-conditions.md).

One browser session per profile, as a run of the browsing arm has it (the run's headers on every
request): the consent page, when the profile has one, is accepted first, then the list page is
opened NAVIGATIONS times. A transient 503 or a 429 is timed as any other navigation (a run meets
them too). Tokens are counted with gpt-4o's tokenizer, as the scripted players count them. Run
`python benchmarks/web_profiles.py`.
"""
from __future__ import annotations

import asyncio
import os
import re
import statistics
import time
from typing import Any

from figures import record

from armbench.domains import DOMAINS
from armbench.replicas.supervisor import replicas_running
from armbench.tools.browser import Browser
from armbench.tools.browser_tools import browser_tools
from armbench.web_profile import PROFILES, headers

NAVIGATIONS = 20
ACCEPT = re.compile(r'button "Accept all cookies" \[ref=(\w+)\]')


async def measure(list_url: str, profile_name: str) -> dict[str, Any]:
    origin = list_url.split("/gpus")[0]
    profile = PROFILES[profile_name]
    async with Browser() as browser:
        session = await browser.new_session([origin], headers=headers(profile, f"bench-{profile_name}.browsing.r0", "1"))
        tools = {tool.name: tool for tool in browser_tools(session)}
        first = (await tools["browser_navigate"].invoke({"url": list_url})).result
        accept = ACCEPT.search(first.get("snapshot", ""))
        if accept:
            await tools["browser_click"].invoke({"ref": accept[1]})
        seconds = []
        for _ in range(NAVIGATIONS):
            began = time.perf_counter()
            await tools["browser_navigate"].invoke({"url": list_url})
            seconds.append(time.perf_counter() - began)
        snapshot = ""
        while "GPU Database" not in snapshot:  # the list page itself, not a transient error page
            snapshot = (await session.navigate(list_url)).snapshot
        await session.close()
    ordered = sorted(seconds)
    return {"profile": profile_name, "p50_ms": 1000 * statistics.median(ordered),
            "p95_ms": 1000 * ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
            "snapshot_tokens": tokens(snapshot), "consent": bool(accept)}


def tokens(text: str) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm.token_counter(model="gpt-4o", text=text)


def main() -> None:
    with replicas_running([DOMAINS["gpus"].replica]) as endpoints:
        list_url = endpoints["gpus"].base_url + "/gpus"
        rows = [asyncio.run(measure(list_url, name)) for name in PROFILES]
    print(f"web profiles: the GPU list page, {NAVIGATIONS} navigations each "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"  {'profile':<9} {'p50 ms':>8} {'p95 ms':>8} {'snapshot tokens':>16}")
    for row in rows:
        print(f"  {row['profile']:<9} {row['p50_ms']:>8.0f} {row['p95_ms']:>8.0f} {row['snapshot_tokens']:>16,}")
        record(f"GPU list page under {row['profile']}: action p50", row["p50_ms"], "ms")
        record(f"GPU list page under {row['profile']}: snapshot", row["snapshot_tokens"], "tokens")


if __name__ == "__main__":
    main()
