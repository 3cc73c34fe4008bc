"""What arms need from a run set: the domains' replicas running and one browser.

Started once per run set (`async with ArmEnvironment(domains) as env`), it hands each run its own
arm (`async with env.open_arm("tooled", "gpus") as arm`): a fresh browser context, closed after the
run, its own python/http_get tools (the python tool holds the run's share of the replicas) and the
domain's typed tools, or the domain's synthesized tool (run in that python tool's sandbox).
"""
from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from armbench.arms import ARMS
from armbench.arms.frozen_tool import FrozenTool
from armbench.arms.tool_source import TypedTools, in_process_tools
from armbench.domains import find_domain
from armbench.errors import UserError
from armbench.replicas.serve import ReplicaEndpoint, endpoint, ensure_replicas
from armbench.tools.base import Arm, OfferedTool, Tool
from armbench.tools.browser import Browser, BrowserSession, PageView
from armbench.tools.browser_tools import browser_tools
from armbench.tools.sandbox import ReplicaRoute
from armbench.tools.synthesized import SynthesizedTool
from armbench.tools.web_tools import PythonTool, web_tools
from armbench.types import DEFAULT_TOOL_TIMEOUT


class LazySession:
    """A run's browser session, opened on the run's first browser action.

    A browser context costs a few hundred milliseconds to open and close; runs that never browse
    (most tooled runs) should not pay for it.
    """

    def __init__(self, browser: Browser, origins: list[str]):
        self._browser = browser
        self._origins = origins
        self._session: BrowserSession | None = None

    @property
    def opened(self) -> bool:
        return self._session is not None

    async def _open(self) -> BrowserSession:
        if self._session is None:
            self._session = await self._browser.new_session(self._origins)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def navigate(self, url: str) -> PageView:
        return await (await self._open()).navigate(url)

    async def snapshot(self) -> PageView:
        return await (await self._open()).snapshot()

    async def click(self, ref: str) -> PageView:
        return await (await self._open()).click(ref)

    async def type(self, ref: str, text: str, submit: bool = False) -> PageView:
        return await (await self._open()).type(ref, text, submit)

    async def select(self, ref: str, value: str) -> PageView:
        return await (await self._open()).select(ref, value)

    async def back(self) -> PageView:
        return await (await self._open()).back()


def check_arm(name: str, domain: str, synthesized: Mapping[str, FrozenTool]) -> None:
    if name not in ARMS:
        raise UserError(f"unknown arm {name!r}; arms: {', '.join(ARMS)}")
    find_domain(domain)  # refuses an unknown domain
    if ARMS[name].synthesized_tool and domain not in synthesized:
        raise UserError(f"the {name} arm needs a tool synthesized for {domain}: make one with `bench synthesize "
                        f"--domain {domain} --out DIR`, then pass --tool-from DIR")


def arm_tools(session: LazySession | None, origin: str, web: list[Tool], typed: list[OfferedTool]) -> list[OfferedTool]:
    """Every arm: browser + python + http_get, then the typed tools the arm gets (none for browsing).
    `origin`: the domain's replica, which the browser tools' examples show."""
    return [*browser_tools(session, origin), *web, *typed]


def resources_prompt(addresses: dict[str, str]) -> str:
    """The replicas every arm is told about, by domain -> base URL (same words for every arm)."""
    return "\n".join(f"- {find_domain(domain).title}: {address}/" for domain, address in sorted(addresses.items()))


def symbolic(domain: str) -> str:
    """How a hash names a domain's replica in place of its address: hashes do not depend on ports."""
    return f"{{replica:{domain}}}"


class ArmEnvironment:
    def __init__(self, domains: list[str], typed_tools: TypedTools = in_process_tools,
                 synthesized: Mapping[str, FrozenTool] | None = None, tool_timeout: float = DEFAULT_TOOL_TIMEOUT):
        """`typed_tools`: where the tooled arm's typed tools come from (in-process, or MCP);
        `synthesized`: the synthesized arm's frozen tool per domain, each call limited to `tool_timeout` s."""
        self.domains = sorted(set(domains))
        self.typed_tools = typed_tools
        self.synthesized = dict(synthesized or {})
        self.tool_timeout = tool_timeout
        self.endpoints: dict[str, ReplicaEndpoint] = {}
        self.browser: Browser | None = None
        self._web: dict[str, list[Tool]] = {}

    async def __aenter__(self) -> ArmEnvironment:
        self.endpoints = await asyncio.to_thread(ensure_replicas, [find_domain(d).replica for d in self.domains])
        self.browser = await Browser().start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.browser is not None:
            await self.browser.close()

    def target(self, domain: str) -> ReplicaEndpoint:
        return self.endpoints.get(domain) or endpoint(find_domain(domain).replica)

    def routes(self, domain: str) -> list[ReplicaRoute]:
        target = self.target(domain)
        return [ReplicaRoute(port=target.port, socket_path=str(target.socket_path))]

    def web(self, domain: str) -> list[Tool]:
        """The web tools as every run gets them: for schemas, hashes and the manifest."""
        if domain not in self._web:
            self._web[domain] = web_tools(self.routes(domain))
        return self._web[domain]

    def sandbox_isolation(self) -> str:
        """How the python tool is isolated on this machine: bwrap or the weaker fallback, and how
        one call's processes are capped together."""
        python = next(tool for tool in self.web(self.domains[0]) if isinstance(tool, PythonTool))
        return f"{python.isolation}; {python.call_caps}"

    def added(self, name: str, domain: str, web: list[Tool]) -> list[OfferedTool]:
        """What the arm adds to browsing: the typed tools, the synthesized tool (in `web`'s sandbox), or nothing."""
        if ARMS[name].typed_tools:
            return self.typed_tools(domain)
        if ARMS[name].synthesized_tool:
            python = next(tool for tool in web if isinstance(tool, PythonTool))
            frozen = self.synthesized[domain]
            return [SynthesizedTool(frozen.spec, python, self.target(domain).base_url, self.tool_timeout)]
        return []

    def synthesized_tools(self, arms: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """The manifest's entry for the synthesized tools these arms use, by domain."""
        if not any(ARMS[name].synthesized_tool for name in arms):
            return {}
        return {domain: frozen.manifest_entry() for domain, frozen in sorted(self.synthesized.items())}

    def synthesized_tool_hash(self, name: str, domain: str) -> str | None:
        """The sha256 of the frozen tool a run of this arm has, for its record (None: it has none)."""
        return self.synthesized[domain].spec.sha256 if ARMS[name].synthesized_tool else None

    def template(self, name: str, domain: str) -> Arm:
        """The arm's tools without a live browser: enough for schemas and the manifest hash. A tool
        the arm adds may not take the name of one it has already (a hand-made frozen tool could)."""
        check_arm(name, domain, self.synthesized)
        web = self.web(domain)
        arm = Arm(name, arm_tools(None, self.target(domain).base_url, web, self.added(name, domain, web)))
        names = [tool.name for tool in arm.tools]
        twice = sorted({tool for tool in names if names.count(tool) > 1})
        if twice:
            raise UserError(f"the {name} arm would offer two tools named {', '.join(twice)}; rename the added one")
        return arm

    def manifest_hash(self, template: Arm, domain: str) -> str:
        """An arm's tool manifest hash (of its `template`) for the manifest and records, free of the
        replica's address. A synthesized tool's source counts too: the same schema over other code
        is another arm."""
        digest = template.manifest_hash({self.target(domain).base_url: symbolic(domain)})
        if ARMS[template.name].synthesized_tool:
            digest = hashlib.sha256(f"{digest}:{self.synthesized[domain].spec.sha256}".encode()).hexdigest()
        return digest

    @asynccontextmanager
    async def open_arm(self, name: str, domain: str) -> AsyncIterator[Arm]:
        check_arm(name, domain, self.synthesized)
        assert self.browser is not None, "use `async with ArmEnvironment(...)`"
        session = LazySession(self.browser, [self.endpoints[domain].base_url])
        try:
            # Web tools of its own: the run's python calls share one allowance at the replicas.
            web = web_tools(self.routes(domain))
            yield Arm(name, arm_tools(session, self.target(domain).base_url, web, self.added(name, domain, web)))
        finally:
            await session.close()
