"""A tool an agent wrote: its spec (`ToolSpec`) and how every call of it runs (`SynthesizedTool`).

A synthesized tool is a standard-library Python module that defines one function, plus the name,
description and JSON-schema parameters the model is shown. It never runs in the harness: each call
is a fresh process in the python tool's sandbox (no project files, loopback-only network holding
just the domain's replica, the run's share of it, memory/CPU/time caps). The harness assigns the
module global `REPLICA_URL` (the replica's base URL on this machine) before the source runs, so a
tool written on one machine works on another port base; what it prints is discarded, and what its
function returns is the result. Arguments are checked against its schema before the sandbox
starts; a raise, a timeout, an oversized or non-JSON result is a tool error the model sees, and a
call the machine starved (sandbox.py's backstop) ends the run as a retryable infra error.
"""
from __future__ import annotations

import ast
import hashlib
import json
import keyword
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from armbench.tools.base import MAX_RESULT_CHARS, ToolError, ToolInfraError, ToolOutcome, check_size, parse_arguments
from armbench.tools.web_tools import PythonTool
from armbench.types import DEFAULT_TOOL_TIMEOUT

MAX_SOURCE_CHARS = 60_000
MAX_DESCRIPTION_CHARS = 8_000
MAX_PARAMETERS_CHARS = 20_000
FORBIDDEN_KEYWORDS = {"$ref", "$dynamicRef", "$recursiveRef", "pattern", "patternProperties"}
NAME_MAPS = {"properties", "$defs", "definitions", "dependentSchemas"}  # keyword -> a map from names to schemas
DATA_KEYWORDS = {"enum", "const", "default", "examples"}  # keyword -> data, not a schema
ERROR_TAIL_CHARS = 2_000
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")

# Runs in the sandbox as the python tool's script: the tool's module gets REPLICA_URL, then its
# function is called with the arguments; only the returned value reaches stdout.
PROGRAM = '''\
import json, linecache, os, sys, traceback, types
result_fd = os.dup(1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what the tool, or a process it starts, prints is discarded
SOURCE = {source!r}
linecache.cache["tool.py"] = (len(SOURCE), None, SOURCE.splitlines(True), "tool.py")
module = types.ModuleType("tool")
module.REPLICA_URL = {replica_url!r}
sys.modules["tool"] = module
try:
    exec(compile(SOURCE, "tool.py", "exec"), module.__dict__)
    result = getattr(module, {function!r})(**json.loads({arguments!r}))
    if not isinstance(result, dict):
        result = {{"result": result}}
    text = json.dumps(result, ensure_ascii=False, allow_nan=False)
except Exception as error:  # the traceback from the tool's own frames on
    traceback.print_exception(type(error), error, error.__traceback__.tb_next)
    sys.exit(1)
with os.fdopen(result_fd, "w", encoding="utf-8") as out:
    out.write(text)
'''


@dataclass(frozen=True)
class ToolSpec:
    """What defines a synthesized tool; `sha256` is its identity in manifests and run records."""

    name: str  # the tool's name and its function's name in `source`
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments (an object)
    source: str

    @property
    def sha256(self) -> str:
        canonical = json.dumps(
            {"name": self.name, "description": self.description, "parameters": self.parameters, "source": self.source},
            sort_keys=True, ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def problems(self) -> list[str]:
        """Why this spec cannot be a tool (empty when it can): each a sentence the author can act on."""
        wrong_types = [field for field in ("name", "description", "source") if not isinstance(getattr(self, field), str)]
        if wrong_types:
            return [f"{', '.join(wrong_types)} must be text"]
        found = []
        if not NAME_PATTERN.fullmatch(self.name) or keyword.iskeyword(self.name):
            found.append(f"name {self.name[:80]!r} must be a lower-case Python identifier of at most 64 characters")
        if not self.description.strip():
            found.append("description is empty: it is all the model will know about the tool")
        elif len(self.description) > MAX_DESCRIPTION_CHARS:
            found.append(f"description is {len(self.description):,} characters (limit {MAX_DESCRIPTION_CHARS:,})")
        found += schema_problems(self.parameters)
        found += source_problems(self.source, self.name)
        return found


def schema_problems(parameters: Any) -> list[str]:
    """The schema is checked in the harness, on every call: it must be self-contained (a reference
    could point anywhere, or at itself) and hold no regular expression (one can backtrack for minutes)."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return ['parameters must be a JSON schema of an object: {"type": "object", "properties": {...}}']
    size = len(json.dumps(parameters))
    if size > MAX_PARAMETERS_CHARS:
        return [f"parameters is {size:,} characters of JSON (limit {MAX_PARAMETERS_CHARS:,}): it is sent on every call"]
    forbidden = sorted(set(keywords(parameters)) & FORBIDDEN_KEYWORDS)
    if forbidden:
        return [f"parameters uses {', '.join(forbidden)}: write the schema out in full (no references) and check "
                "text in the tool itself (no pattern)"]
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as error:
        return [f"parameters is not a valid JSON schema: {error.message[:300]}"]
    return []


def keywords(schema: Any) -> Iterator[str]:
    """Every keyword the schema uses, at any depth: not the names in `properties` or `$defs`, nor
    the data of `enum`, `const`, `default` and `examples`."""
    stack: list[tuple[Any, bool]] = [(schema, False)]  # (node, whether its keys are names, not keywords)
    while stack:
        node, names = stack.pop()
        if isinstance(node, list):
            stack.extend((item, False) for item in node)
        elif isinstance(node, dict):
            if not names:
                yield from node
            stack.extend((value, not names and key in NAME_MAPS) for key, value in node.items()
                         if names or key not in DATA_KEYWORDS)


def source_problems(source: str, name: str) -> list[str]:
    if len(source) > MAX_SOURCE_CHARS:
        return [f"source is {len(source):,} characters (limit {MAX_SOURCE_CHARS:,})"]
    try:
        module = ast.parse(source, "tool.py")
    except SyntaxError as error:
        return [f"source does not compile: {error.msg} at line {error.lineno}"]
    except (RecursionError, MemoryError, ValueError) as error:  # nesting too deep; a NUL byte
        return [f"source does not compile: {type(error).__name__}"]
    functions = {node.name for node in module.body if isinstance(node, ast.FunctionDef)}
    if name not in functions:
        return [f"source defines no top-level function {name!r} (def {name}(...): the tool's name)"]
    return []


def sandbox_program(spec: ToolSpec, replica_url: str, arguments: dict[str, Any]) -> str:
    return PROGRAM.format(source=spec.source, replica_url=replica_url, function=spec.name,
                          arguments=json.dumps(arguments, ensure_ascii=False))


class SynthesizedTool:
    """An OfferedTool: the spec's schema to the model, each call run in `sandbox` (the run's python
    tool, so the tool shares the run's allowance at the replica) within `timeout_s`."""

    def __init__(self, spec: ToolSpec, sandbox: PythonTool, replica_url: str,
                 timeout_s: float = DEFAULT_TOOL_TIMEOUT):
        self.spec = spec
        self.name = spec.name
        self.sandbox = sandbox
        self.replica_url = replica_url.rstrip("/")
        self.timeout_s = timeout_s
        self.validator = Draft202012Validator(spec.parameters)

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.spec.name, "description": self.spec.description,
                         "parameters": json.loads(json.dumps(self.spec.parameters))},
        }

    async def invoke(self, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        try:
            result = await self.call(self.checked(parse_arguments(arguments)))
            check_size(result)
        except ToolError as error:
            return ToolOutcome(error.as_result(), is_error=True)
        except ToolInfraError:
            raise  # the machine starved the call: the run is an infra error, not the tool's
        except Exception as error:  # arguments nested too deep, a sandbox that cannot start: never a crash
            failure = ToolError("tool_failure", f"{self.name} could not be called: {type(error).__name__}: {error}")
            return ToolOutcome(failure.as_result(), is_error=True)
        return ToolOutcome(result, is_error="error" in result)  # a tool may report its own errors

    def checked(self, arguments: dict[str, Any]) -> dict[str, Any]:
        problems = [
            {"at": ".".join(str(part) for part in error.absolute_path) or "(root)", "problem": error.message[:300]}
            for error in self.validator.iter_errors(arguments)
        ]
        if problems:
            raise ToolError("invalid_arguments", "the arguments do not match the tool's schema", problems=problems[:10])
        return arguments

    async def call(self, arguments: dict[str, Any]) -> dict[str, Any]:
        ran = await self.sandbox.execute(
            sandbox_program(self.spec, self.replica_url, arguments),
            wall_timeout_s=self.timeout_s, cpu_s=math.ceil(self.timeout_s) + 1, output_chars=MAX_RESULT_CHARS + 1,
        )
        if ran.timed_out:
            raise ToolError("timeout", f"{self.name} did not return within {self.timeout_s:g} s; the call was killed")
        if ran.killed_reason:
            raise ToolError("tool_failure", f"{self.name} was killed: {ran.killed_reason}")
        if ran.exit_code != 0:
            trace = ran.stderr.strip()
            raise ToolError("tool_failure", f"{self.name} raised {trace.splitlines()[-1] if trace else 'an error'}",
                            traceback=trace[-ERROR_TAIL_CHARS:])
        if ran.stdout_truncated:
            raise ToolError("result_too_large", f"{self.name} returned over {MAX_RESULT_CHARS:,} characters of JSON; "
                            "ask for fewer rows or fields")
        try:
            result = json.loads(ran.stdout)
        except (ValueError, RecursionError):
            result = None
        if not isinstance(result, dict):  # the program writes a dict; anything else was written around it
            raise ToolError("tool_failure", f"{self.name} returned no JSON result (did it write to stdout itself?)")
        return result
