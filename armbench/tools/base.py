"""The Tool protocol, and ArmTools: the tools one arm gives one run.

A tool's description is its model-facing spec and its pydantic `Args` model is the JSON schema the
model sees. `Tool.invoke` is the only way the agent loop calls a tool: it turns every failure
(unparseable JSON, schema violations, a tool's own ToolError, an unexpected exception) into a
structured error result, so nothing a model sends can raise out of the loop.
"""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ValidationError

MAX_RESULT_CHARS = 64_000


class ToolError(Exception):
    """A problem the model can fix: becomes `{"error": {...}}` in the tool result."""

    def __init__(self, kind: str, message: str, **details: Any):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details

    def as_result(self) -> dict[str, Any]:
        return {"error": {"type": self.kind, "message": self.message, **self.details}}


class ToolInfraError(Exception):
    """The harness failed the call, not the agent: the tool's backend is gone (its MCP server or
    replica died) or the machine starved it. The run is an infra error, never a miss, and a
    `--resume` runs it again."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one call produced: the JSON result sent to the model and whether it was an error."""

    result: dict[str, Any]
    is_error: bool

    def to_message_content(self) -> str:
        return json.dumps(self.result, ensure_ascii=False, default=str)


class Tool(ABC):
    """Subclasses set `name`, `description`, `Args` and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]

    @abstractmethod
    async def run(self, args: BaseModel) -> dict[str, Any]:
        """Do the work; raise ToolError for problems the model can fix."""

    def schema(self) -> dict[str, Any]:
        """The OpenAI/LiteLLM `tools` entry for this tool (a fresh copy: callers may mutate it).

        The description is read from the instance: some tools state their own limits or origins.
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(_parameters_of(self.Args)),
            },
        }

    async def invoke(self, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        try:
            raw = parse_arguments(arguments)
            args = self.Args.model_validate(raw)
            result = await self.run(args)
            check_size(result)
        except ToolError as error:
            return ToolOutcome(error.as_result(), is_error=True)
        except ToolInfraError:
            raise  # not the model's to fix: the loop ends the run as an infra error
        except ValidationError as error:
            return ToolOutcome(validation_error_result(error), is_error=True)
        except Exception as error:  # a tool bug must not end the episode; the model is told
            return ToolOutcome(
                ToolError("tool_failure", f"{type(error).__name__}: {error}").as_result(),
                is_error=True,
            )
        return ToolOutcome(result, is_error=False)


@cache
def _parameters_of(args_model: type[BaseModel]) -> str:
    """Built once per argument model, as JSON text: the agent sends it on every model call, and
    reading the text back makes a fresh copy about five times faster than deep-copying the dict."""
    return json.dumps(args_model.model_json_schema())


def parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as error:
        raise ToolError(
            "invalid_json", f"tool arguments are not valid JSON ({error.msg} at {error.pos})"
        ) from None
    if not isinstance(parsed, dict):
        raise ToolError("invalid_json", "tool arguments must be a JSON object")
    return parsed


def validation_error_result(error: ValidationError) -> dict[str, Any]:
    problems = [
        {"at": ".".join(str(part) for part in issue["loc"]) or "(root)", "problem": issue["msg"]}
        for issue in error.errors(include_url=False)
    ]
    return ToolError(
        "invalid_arguments", "the arguments do not match the tool's schema", problems=problems
    ).as_result()


def check_size(result: dict[str, Any], max_chars: int = MAX_RESULT_CHARS) -> None:
    """Results are bounded: an oversized one becomes an error telling the model how to narrow it."""
    size = len(json.dumps(result, ensure_ascii=False, default=str))
    if size > max_chars:
        raise ToolError(
            "result_too_large",
            f"the result is {size:,} characters (limit {max_chars:,}); "
            "narrow the filters, lower `limit` or request fewer `fields`",
        )


class OfferedTool(Protocol):
    """What an arm offers the model: a `Tool`, or a tool served elsewhere (an MCP server's).

    `invoke` returns an outcome for anything the model can cause; it raises only ToolInfraError.
    """

    name: str

    def schema(self) -> dict[str, Any]: ...

    async def invoke(self, arguments: str | dict[str, Any] | None) -> ToolOutcome: ...


@dataclass
class ArmTools:
    """The tools a run of arm `name` is offered (arms/ says which; this is what the agent loop calls)."""

    name: str
    tools: list[OfferedTool] = field(default_factory=list)

    def tool(self, name: str) -> OfferedTool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self.tools]

    def unknown_tool(self, name: str) -> ToolOutcome:
        """What a call of a tool the arm does not offer gets back: an error naming those it does."""
        known = [tool.name for tool in self.tools]
        return ToolOutcome(ToolError("unknown_tool", f"no tool named {name!r}", valid_choices=known).as_result(),
                           is_error=True)

    def manifest_hash(self, addresses: dict[str, str] | None = None) -> str:
        """Hash of every tool's name, description and schema: a changed description is a new arm.
        `addresses` (live address -> a name for it) are replaced first, so descriptions that show
        the run's replica hash the same on any port base."""
        payload = json.dumps(self.schemas(), sort_keys=True)
        for address, name in (addresses or {}).items():
            payload = payload.replace(address, name)
        return hashlib.sha256(payload.encode()).hexdigest()
