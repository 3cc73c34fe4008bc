"""The arms: what tools an agent gets, each arm one class, registered in ARMS. Every arm gets the
same model, system prompt and budget, and browsing's tools (a browser, a python sandbox and raw
HTTP to the replica); an arm differs only in the tools it adds (`ArmKind.added`).
`environment.ArmEnvironment` builds an arm's tools for each run.

A fourth arm is a subclass of ArmKind and one `register_arm(...)` line; nothing else names arms.

The synthesized arm needs a tool an agent built (`bench synthesize`, then `--tool-from`), so "all
arms" means it only when one is given.

Kept free of heavy imports (the tools an arm adds are imported when it adds them), so the CLI
checks `--arm` before anything loads.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from armbench.arms.environment import ArmEnvironment
    from armbench.arms.frozen_tool import FrozenTool
    from armbench.tools.base import OfferedTool, Tool


class ArmKind:
    """One arm: browsing's tools, plus what `added` gives. The base class is the browsing arm."""

    name: ClassVar[str] = "browsing"
    needs_tool_from: ClassVar[bool] = False  # it adds a tool an agent built, given with --tool-from
    added_tools_use_replica: ClassVar[bool] = True  # calls of its added tools reach the replica server

    def added(self, env: ArmEnvironment, domain: str, web: list[Tool]) -> list[OfferedTool]:
        """The tools the arm adds to browsing for one run (`web`: that run's python and http tools)."""
        return []

    def frozen_tool(self, env: ArmEnvironment, domain: str) -> FrozenTool | None:
        """The tool an agent built that this arm adds, which its hashes and records name."""
        return None


class TooledArm(ArmKind):
    """Browsing plus the domain's typed tools (in-process, or from an MCP server)."""

    name = "tooled"
    added_tools_use_replica = False  # the typed tools read their tables in-process

    def added(self, env: ArmEnvironment, domain: str, web: list[Tool]) -> list[OfferedTool]:
        return env.typed_tools(domain)


class SynthesizedArm(ArmKind):
    """Browsing plus the tool an agent wrote for the domain, run in the run's python sandbox per call."""

    name = "synthesized"
    needs_tool_from = True

    def added(self, env: ArmEnvironment, domain: str, web: list[Tool]) -> list[OfferedTool]:
        from armbench.tools.synthesized import SynthesizedTool
        from armbench.tools.web_tools import PythonTool

        python = next(tool for tool in web if isinstance(tool, PythonTool))
        frozen = self.frozen_tool(env, domain)
        return [SynthesizedTool(frozen.spec, python, env.target(domain).base_url, env.tool_timeout)]

    def frozen_tool(self, env: ArmEnvironment, domain: str) -> FrozenTool:
        return env.synthesized[domain]


ARMS: dict[str, ArmKind] = {}


def register_arm(arm: ArmKind) -> ArmKind:
    """Offer `arm` under its name (`--arm NAME`); a name is taken once."""
    if arm.name in ARMS:
        raise ValueError(f"an arm named {arm.name!r} is registered already")
    ARMS[arm.name] = arm
    return arm


register_arm(ArmKind())
register_arm(TooledArm())
register_arm(SynthesizedArm())


def default_arms(with_synthesized_tool: bool) -> list[str]:
    """What "all arms" means: every arm, one that needs a built tool only when one is given."""
    return [name for name, arm in ARMS.items() if with_synthesized_tool or not arm.needs_tool_from]
