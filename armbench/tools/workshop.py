"""The workshop: the tools a synthesis episode adds to the browsing arm to build a tool of its own.

`write_tool` sets the draft (checked: a name, a description, a JSON schema, a module defining the
function), `try_tool` runs the draft exactly as the synthesized arm will (a `SynthesizedTool` in
the run's sandbox), and `submit_tool` freezes the draft and ends the episode. Schemas and
arguments travel as JSON text, so every argument is a string: any provider, and a local model's
grammar, can carry them.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from armbench.tools.base import Tool, ToolError
from armbench.tools.synthesized import SynthesizedTool, ToolSpec
from armbench.tools.web_tools import PythonTool
from armbench.types import DEFAULT_TOOL_TIMEOUT

WRITE_DESCRIPTION = """\
Write (or rewrite) the draft of your tool: its name, its description, the JSON schema of its \
arguments and its Python source. The source is a standard-library-only module that defines a \
top-level function with the tool's name; it is called as name(**arguments) and returns a \
JSON-serializable dict, the tool's result. It reaches the site only over HTTP, at the module \
global REPLICA_URL (the site's base URL, assigned before your module runs: never write a host \
or port). Each call runs in a fresh sandboxed process ({timeout:g} s, the python tool's memory \
and network limits); prints are discarded; nothing carries over between calls, so cache within a \
call only. Results over 64,000 characters are refused.

Result: {{"written", "sha256"}} or {{"error": {{"type", "message", "problems"}}}}."""

TRY_DESCRIPTION = """\
Call the current draft with the arguments you give (a JSON object, as text), exactly as an agent \
using the tool will: checked against its schema, run in the sandbox within {timeout:g} s. \
Result: what the function returned, or the tool error an agent would see (a raise with its \
traceback, a timeout, an oversized result, invalid arguments)."""

SUBMIT_DESCRIPTION = """\
Freeze the current draft as your tool and end this session; it cannot be changed afterwards. \
Agents then answer new questions of the same kind with it."""


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The tool's name: a lower-case Python identifier, also the function's name.")
    description: str = Field(description="What the tool does and how to call it, for the agents who will use it.")
    parameters: str = Field(description='The JSON schema of the arguments, as JSON text: {"type": "object", ...}.')
    source: str = Field(description="The module's Python source.")


class TryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arguments: str = Field("{}", description="The arguments, a JSON object as text.")


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Workshop:
    """One synthesis episode's draft and, once submitted, its frozen spec."""

    def __init__(self, sandbox: PythonTool, replica_url: str, reserved: Iterable[str],
                 timeout_s: float = DEFAULT_TOOL_TIMEOUT):
        self.sandbox = sandbox
        self.replica_url = replica_url
        self.reserved = set(reserved)  # the arm's other tools: a synthesized tool may not shadow one
        self.timeout_s = timeout_s
        self.draft: ToolSpec | None = None
        self.submitted: ToolSpec | None = None

    def tools(self) -> list[Tool]:
        return [WriteTool(self), TryTool(self), SubmitTool(self)]

    def current(self) -> ToolSpec:
        if self.draft is None:
            raise ToolError("no_draft", "there is no draft yet: write one with write_tool first")
        return self.draft


class WorkshopTool(Tool):
    """A tool of the workshop: its description states the workshop's call timeout."""

    template: ClassVar[str]

    def __init__(self, workshop: Workshop):
        self.workshop = workshop
        self.description = self.template.format(timeout=workshop.timeout_s)


class WriteTool(WorkshopTool):
    name = "write_tool"
    template = WRITE_DESCRIPTION
    Args = WriteArgs

    async def run(self, args: WriteArgs) -> dict[str, Any]:
        try:
            parameters = json.loads(args.parameters)
        except ValueError as error:
            raise ToolError("invalid_arguments", f"parameters is not JSON text: {error}") from None
        spec = ToolSpec(args.name, args.description, parameters, args.source)
        problems = spec.problems()
        if spec.name in self.workshop.reserved:
            problems.append(f"{spec.name!r} is the name of a tool agents already have; choose another")
        address = self.workshop.replica_url.removeprefix("http://")
        if address in spec.source:
            problems.append(f"the source names this machine's replica address ({address}); read REPLICA_URL "
                            "instead: the port differs on other machines")
        if problems:
            raise ToolError("invalid_tool", "the draft was not written", problems=problems)
        self.workshop.draft = spec
        return {"written": spec.name, "sha256": spec.sha256}


class TryTool(WorkshopTool):
    name = "try_tool"
    template = TRY_DESCRIPTION
    Args = TryArgs

    async def run(self, args: TryArgs) -> dict[str, Any]:
        w = self.workshop
        tool = SynthesizedTool(w.current(), w.sandbox, w.replica_url, w.timeout_s)
        outcome = await tool.invoke(args.arguments)
        error = outcome.result.get("error") if outcome.is_error else None
        if isinstance(error, dict):  # the tool error an agent would see, as this tool's own
            failure = ToolError(str(error.get("type", "tool_error")), str(error.get("message", "")))
            failure.details = {key: value for key, value in error.items() if key not in ("type", "message")}
            raise failure
        return outcome.result


class SubmitTool(WorkshopTool):
    name = "submit_tool"
    template = SUBMIT_DESCRIPTION
    Args = NoArgs

    async def run(self, args: NoArgs) -> dict[str, Any]:
        spec = self.workshop.current()
        self.workshop.submitted = spec
        return {"submitted": spec.name, "sha256": spec.sha256}
