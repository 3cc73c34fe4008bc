"""What arms need from a run set: the domains' replicas running and one browser (none where no run is played).

Started once per run set (`async with ArmEnvironment(domains) as env`), it hands each run its own
arm (`async with env.open_arm("tooled", "gpus") as arm`): a fresh browser context, closed after the
run, its own python/http_get tools (the python tool holds the run's share of the replicas) and the
domain's typed tools, or the domain's synthesized tool (run in that python tool's sandbox).

The environment owns its replicas (replicas/supervisor.py): a server that dies is restarted, and
every tool that talks to it is `Supervised`, so a call the server died during ends the run as a
retryable infra error instead of showing the model a broken page.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from armbench.arms import ARMS
from armbench.arms.frozen_tool import FrozenTool
from armbench.arms.tool_source import TypedTools, in_process_tools
from armbench.domains import find_domain
from armbench.errors import UserError
from armbench.replicas.serve import Replica, ReplicaEndpoint, endpoint
from armbench.replicas.supervisor import (
    ReplicaServer,
    ServerWatch,
    done_with,
    health,
    pid_path,
    server_for,
    start_timeout,
)
from armbench.tools.base import ArmTools, OfferedTool, Tool, ToolInfraError, ToolOutcome
from armbench.tools.browser import Browser, BrowserSession, PageView
from armbench.tools.browser_tools import browser_tools
from armbench.tools.call_usage import charge, queueing
from armbench.tools.sandbox import ReplicaRoute
from armbench.tools.web_tools import PythonTool, web_tools
from armbench.types import DEFAULT_TOOL_TIMEOUT, KIND_WEB, WebProfile
from armbench.web_profile import headers as web_headers


class LazySession:
    """A run's browser session, opened on the run's first browser action.

    A browser context costs a few hundred milliseconds to open and close; runs that never browse
    (most tooled runs) should not pay for it.
    """

    def __init__(self, browser: Browser, origins: list[str], headers: dict[str, str] | None = None):
        self._browser = browser
        self._origins = origins
        self._headers = headers
        self._session: BrowserSession | None = None

    @property
    def opened(self) -> bool:
        return self._session is not None

    async def _open(self) -> BrowserSession:
        if self._session is None:
            self._session = await self._browser.new_session(self._origins, headers=self._headers)
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


class Supervised:
    """A tool that talks to the replica server, held to it: a call waits while the server restarts,
    and one the server died during raises ToolInfraError (the run is an infra error that `--resume`
    runs again), never reaching the model as a page that failed to load."""

    def __init__(self, tool: OfferedTool, watch: ServerWatch):
        self.tool = tool
        self.watch = watch
        self.name = tool.name

    def schema(self) -> dict:
        return self.tool.schema()

    async def invoke(self, arguments: str | dict | None) -> ToolOutcome:
        waiting = time.monotonic()
        with queueing():  # the harness's wait, not the run's: see engine/agent.py
            server = await self.watch.ready()
        charge(queue_seconds=time.monotonic() - waiting)
        if server is None:
            raise ToolInfraError("the replica server is down" + (" for good" if self.watch.given_up() else
                                 f" and did not come back within {self.watch.patience:g} s"))
        outcome = await self.tool.invoke(arguments)
        if not self.watch.intact(server):
            raise ToolInfraError(f"the replica server (pid {server}) died during this {self.name} call")
        return outcome


def python_tool(arm: ArmTools) -> PythonTool:
    """The run's python tool, unwrapped: the sandbox a synthesis workshop runs its drafts in."""
    return next(tool.tool for tool in arm.tools if isinstance(tool, Supervised) and isinstance(tool.tool, PythonTool))


def check_arm(name: str, domain: str, synthesized: Mapping[str, FrozenTool]) -> None:
    if name not in ARMS:
        raise UserError(f"unknown arm {name!r}; arms: {', '.join(ARMS)}")
    find_domain(domain)  # refuses an unknown domain
    if ARMS[name].needs_tool_from and domain not in synthesized:
        raise UserError(f"the {name} arm needs a tool synthesized for {domain}: make one with `bench synthesize "
                        f"--domain {domain} --out DIR`, then pass --tool-from DIR")


def tell(message: str) -> None:
    print(f"armbench: {message}", file=sys.stderr, flush=True)


def attach(replicas: list) -> dict[str, ReplicaEndpoint]:
    """The endpoints of replicas another process of this run set owns, once each answers healthy."""
    down = [replica.name for replica in replicas if not health(replica)]
    if down:
        raise UserError(f"the {', '.join(down)} replica does not serve this checkout's data at "
                        f"{endpoint(find_domain(down[0]).replica).base_url}, where its owner should have started it")
    return {replica.name: endpoint(replica) for replica in replicas}


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


KEEP_WARM_ENV = "ARMBENCH_KEEP_WARM"


def keeps_warm() -> bool:
    """Whether this process keeps its replica server and Chromium between run sets (KEEP_WARM_ENV=1):
    for a process that runs many (a notebook, the test suite), each after the first starts faster."""
    raw = os.environ.get(KEEP_WARM_ENV, "")
    if raw not in ("", "0", "1"):
        raise UserError(f"{KEEP_WARM_ENV}={raw!r}: say 1 to keep the replicas and browser between run sets, or 0")
    return raw == "1"


class ArmEnvironment:
    def __init__(self, domains: list[str], typed_tools: TypedTools = in_process_tools,
                 synthesized: Mapping[str, FrozenTool] | None = None, tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
                 own_replicas: bool = True, keep_warm: bool | None = None, web: WebProfile = KIND_WEB,
                 plays_runs: bool = True):
        """`typed_tools`: where the tooled arm's typed tools come from (in-process, or MCP);
        `synthesized`: the synthesized arm's frozen tool per domain, each call limited to `tool_timeout` s;
        `own_replicas`: start and supervise replicas of its own, or (False: a Ray actor beside its
        driver) use the ones running on the current port base, which their owner supervises;
        `keep_warm`: keep the replicas and Chromium for the next environment (default: KEEP_WARM_ENV);
        `web`: the frictions the replicas put in each run's way (armbench/web_profile.py);
        `plays_runs`: False for a Ray driver, whose actors play every run: it opens no arm, so it
        launches no Chromium (half a second of CPU the actors, starting meanwhile, need)."""
        self.domains = sorted(set(domains))
        self.web_profile = web
        self.own_replicas = own_replicas
        self.keep_warm = keeps_warm() if keep_warm is None else keep_warm
        self.plays_runs = plays_runs
        self.server: ReplicaServer | None = None
        self.watch: ServerWatch | None = None
        self._supervisor: asyncio.Task | None = None
        self.typed_tools = typed_tools
        self.synthesized = dict(synthesized or {})
        self.tool_timeout = tool_timeout
        self.endpoints: dict[str, ReplicaEndpoint] = {}
        self.browser: Browser | None = None
        self._web: dict[str, list[Tool]] = {}

    async def __aenter__(self) -> ArmEnvironment:
        """The replicas and Chromium (when it plays runs) start side by side, each in a process of
        its own: a run set's start-up is the longer of the two, not their sum."""
        replicas = [find_domain(d).replica for d in self.domains]
        starting = [self._start_replicas(replicas)]
        if self.plays_runs:
            self.browser = Browser(self.keep_warm)  # closing one that did not start does nothing
            starting.append(self.browser.start())
        try:
            started = await asyncio.gather(*starting, return_exceptions=True)
            failed = next((outcome for outcome in started if isinstance(outcome, BaseException)), None)
            if failed is not None:
                raise failed
            self.watch = ServerWatch(pid_path(), patience=start_timeout(len(replicas)) * 2)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def _start_replicas(self, replicas: list[Replica]) -> None:
        if self.own_replicas:
            self.server, self.endpoints = await asyncio.to_thread(server_for, replicas, self.keep_warm)
            self._supervisor = asyncio.create_task(self.server.supervise(tell))
        else:
            self.endpoints = await asyncio.to_thread(attach, replicas)

    async def __aexit__(self, *exc_info: object) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
        closing = []
        if self.browser is not None:
            closing.append(self.browser.close())
        if self.server is not None:
            closing.append(asyncio.to_thread(done_with, self.server, self.keep_warm))
        await asyncio.gather(*closing)

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

    def synthesized_tools(self, arms: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """The manifest's entry for the synthesized tools these arms use, by domain."""
        if not any(ARMS[name].needs_tool_from for name in arms):
            return {}
        return {domain: frozen.manifest_entry() for domain, frozen in sorted(self.synthesized.items())}

    def synthesized_tool_hash(self, name: str, domain: str) -> str | None:
        """The sha256 of the frozen tool a run of this arm has, for its record (None: it has none)."""
        frozen = ARMS[name].frozen_tool(self, domain)
        return frozen.spec.sha256 if frozen is not None else None

    def template(self, name: str, domain: str) -> ArmTools:
        """The arm's tools without a live browser: enough for schemas and the manifest hash. A tool
        the arm adds may not take the name of one it has already (a hand-made frozen tool could)."""
        check_arm(name, domain, self.synthesized)
        web = self.web(domain)
        arm = ArmTools(name, arm_tools(None, self.target(domain).base_url, web, ARMS[name].added(self, domain, web)))
        names = [tool.name for tool in arm.tools]
        twice = sorted({tool for tool in names if names.count(tool) > 1})
        if twice:
            raise UserError(f"the {name} arm would offer two tools named {', '.join(twice)}; rename the added one")
        return arm

    def manifest_hash(self, template: ArmTools, domain: str) -> str:
        """An arm's tool manifest hash (of its `template`) for the manifest and records, free of the
        replica's address. A synthesized tool's source counts too: the same schema over other code
        is another arm."""
        digest = template.manifest_hash({self.target(domain).base_url: symbolic(domain)})
        frozen = ARMS[template.name].frozen_tool(self, domain)
        if frozen is not None:
            digest = hashlib.sha256(f"{digest}:{frozen.spec.sha256}".encode()).hexdigest()
        return digest

    @asynccontextmanager
    async def open_arm(self, name: str, domain: str, run_id: str | None = None) -> AsyncIterator[ArmTools]:
        """The arm's tools for one run; the run's requests to the replica carry its web profile,
        keyed by `run_id` (without one, the kind web)."""
        check_arm(name, domain, self.synthesized)
        assert self.browser is not None, "use `async with ArmEnvironment(...)`, one that plays runs"
        assert self.watch is not None
        if run_id is None and not self.web_profile.is_kind:
            raise ValueError(f"the web profile {self.web_profile.name!r} needs the run's id to key its frictions")
        headers = web_headers(self.web_profile, run_id, secrets.token_hex(6)) if run_id is not None else {}
        session = LazySession(self.browser, [self.endpoints[domain].base_url], headers)
        try:
            # Web tools of its own: the run's python calls share one allowance at the replicas.
            web = web_tools(self.routes(domain), headers=headers)
            added = ARMS[name].added(self, domain, web)
            in_process = set() if ARMS[name].added_tools_use_replica else {id(tool) for tool in added}
            tools = arm_tools(session, self.target(domain).base_url, web, added)
            # Every tool that talks to the replica is held to its server.
            yield ArmTools(name, [tool if id(tool) in in_process else Supervised(tool, self.watch) for tool in tools])
        finally:
            await session.close()
