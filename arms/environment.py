"""What arms need from a run set: the domains' replicas running and one browser.

Started once per run set (`async with ArmEnvironment(domains) as env`), it hands each run its own
arm (`async with env.open_arm("tooled", "gpus") as arm`): a fresh browser context, closed after the
run, plus the stateless python/http_get tools and the domain's typed tools.
"""
from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import AsyncIterator

from arms.base import Arm, OfferedTool, Tool
from arms.browser import Browser, BrowserSession
from arms.sandbox import ReplicaRoute
from arms.tool_source import TypedTools, in_process_tools
from arms.tools.browser_tools import browser_tools
from arms.tools.web_tools import web_tools
from harness.errors import UserError
from replicas.serve import REPLICAS, ReplicaEndpoint, endpoint, ensure_replicas

ARM_NAMES = ("browsing", "tooled")


def check_arm(name: str, domain: str) -> None:
    if name not in ARM_NAMES:
        raise UserError(f"unknown arm {name!r}; arms: {', '.join(ARM_NAMES)}")
    if domain not in REPLICAS:
        raise UserError(f"no replica for domain {domain!r}; replicas: {', '.join(REPLICAS)}")


def arm_tools(
    name: str, session: BrowserSession | None, web: list[Tool], typed: list[OfferedTool]
) -> list[OfferedTool]:
    """browsing = browser + python + http_get; tooled = the same + the domain's typed tools."""
    tools: list[OfferedTool] = [*browser_tools(session), *web]
    return tools + typed if name == "tooled" else tools


def resources_prompt(endpoints: dict[str, ReplicaEndpoint]) -> str:
    """The replica addresses every arm is told about (same words for every arm)."""
    return "\n".join(
        f"- {REPLICAS[domain].title}: {target.base_url}/" for domain, target in sorted(endpoints.items())
    )


class ArmEnvironment:
    def __init__(self, domains: list[str], typed_tools: TypedTools = in_process_tools):
        """`typed_tools`: where the tooled arm's typed tools come from (in-process, or MCP)."""
        self.domains = sorted(set(domains))
        self.typed_tools = typed_tools
        self.endpoints: dict[str, ReplicaEndpoint] = {}
        self.browser: Browser | None = None
        self._web: dict[str, list[Tool]] = {}

    async def __aenter__(self) -> ArmEnvironment:
        self.endpoints = await asyncio.to_thread(ensure_replicas, self.domains)
        self.browser = await Browser().start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.browser is not None:
            await self.browser.close()

    def web(self, domain: str) -> list[Tool]:
        if domain not in self._web:
            target = self.endpoints.get(domain) or endpoint(domain)
            self._web[domain] = web_tools([ReplicaRoute(port=target.port, socket_path=str(target.socket_path))])
        return self._web[domain]

    def typed(self, name: str, domain: str) -> list[OfferedTool]:
        return self.typed_tools(domain) if name == "tooled" else []

    def template(self, name: str, domain: str) -> Arm:
        """The arm's tools without a live browser: enough for schemas and the manifest hash."""
        check_arm(name, domain)
        return Arm(name, arm_tools(name, None, self.web(domain), self.typed(name, domain)))

    @asynccontextmanager
    async def open_arm(self, name: str, domain: str) -> AsyncIterator[Arm]:
        check_arm(name, domain)
        assert self.browser is not None, "use `async with ArmEnvironment(...)`"
        session = await self.browser.new_session([self.endpoints[domain].base_url])
        try:
            yield Arm(name, arm_tools(name, session, self.web(domain), self.typed(name, domain)))
        finally:
            await session.close()
