"""Scripts that play a synthesis episode (`bench synthesize`), offline:

- `scripted/synth-oracle` writes the known-good tool for the domain (its folder's known_tool/tool.py,
  with its spec in tool.json), tries it on the first design question that has a typed solution of
  the same name, and submits it. A step of its that fails is the script's failure, raised as a
  provider error (the synthesis then records an infra error, never a tool).
- `scripted/synth-broken` writes broken_tool/tool.py, tries it in each way it fails (a raise, a
  hang past the call timeout, an oversized result: each must come back as a tool error), then
  submits it, so the synthesized arm can be seen to survive it too.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import litellm

from armbench.domains import DOMAINS, find_domain
from armbench.players.script_registry import Reply, ScriptedToolCall, Turn
from armbench.questions import load_sets, solution, with_replica_addresses

BROKEN_TOOL = Path(__file__).resolve().parent / "broken_tool"
DOMAIN_LINE = re.compile(r"^Domain: (\S+)$", re.M)
WORKSHOP = ("write_tool", "try_tool", "submit_tool")
BROKEN_MODES = ("raise", "hang", "huge")


def write_call(folder: Path) -> ScriptedToolCall:
    """write_tool with the tool in `folder` (its source tool.py and spec tool.json)."""
    spec = json.loads((folder / "tool.json").read_text(encoding="utf-8"))
    return ScriptedToolCall("write_tool", {
        "name": spec["name"], "description": spec["description"],
        "parameters": json.dumps(spec["parameters"]), "source": (folder / "tool.py").read_text(encoding="utf-8"),
    })


def try_call(arguments: dict[str, Any]) -> ScriptedToolCall:
    return ScriptedToolCall("try_tool", {"arguments": json.dumps(arguments)})


SUBMIT = ScriptedToolCall("submit_tool", {})


def domain_of(turn: Turn) -> str | None:
    found = DOMAIN_LINE.search(turn.user_prompt)
    return found.group(1) if found else None


def design_arguments(domain: str, tool_name: str) -> dict[str, Any]:
    """The first call of the first design question solved with a tool of this name."""
    for question_set in load_sets([domain], ["design"]):
        for question in question_set.questions:
            tooled = solution(question, "tooled")
            if tooled and tooled.calls[0].tool == tool_name:
                return with_replica_addresses(tooled.calls[0].args)
    return {}


def synth_oracle(turn: Turn) -> Reply:
    if not all(name in turn.tool_names for name in WORKSHOP):
        return Reply(text="synth-oracle builds tools: run it with `bench synthesize`.")
    domain = domain_of(turn)
    known = find_domain(domain).known_tool if domain in DOMAINS else None
    if known is None or not (known / "tool.json").exists():
        return Reply(text=f"I know no tool for the domain {domain!r}.")
    write = write_call(known)
    steps = [write, try_call(design_arguments(domain, write.arguments["name"])), SUBMIT]
    return play_steps(turn, steps, check=True)


def play_steps(turn: Turn, steps: list[ScriptedToolCall], check: bool) -> Reply:
    """The next step after the results so far (each checked first, when `check`)."""
    results = turn.tool_results()
    if results and check:
        check_step(steps[len(results) - 1], results[-1])
    if len(results) >= len(steps):
        return Reply(text="The tool is submitted.")
    return Reply(tool_calls=[steps[len(results)]])


def check_step(step: ScriptedToolCall, result: str) -> None:
    """A known-good tool's step must succeed: raise (as a provider error) when it did not."""
    try:
        error = json.loads(result).get("error")
    except (ValueError, AttributeError):
        error = "not a JSON object"
    if error:
        raise litellm.BadRequestError(message=f"synth-oracle's {step.name} failed: {json.dumps(error)[:500]}",
                                      model="synth-oracle", llm_provider="scripted")


def synth_broken(turn: Turn) -> Reply:
    if not all(name in turn.tool_names for name in WORKSHOP):
        return Reply(text="synth-broken builds tools: run it with `bench synthesize`.")
    steps = [write_call(BROKEN_TOOL), *(try_call({"mode": mode}) for mode in BROKEN_MODES), SUBMIT]
    return play_steps(turn, steps, check=False)


SYNTHESIS_SCRIPTS = {"synth-oracle": synth_oracle, "synth-broken": synth_broken}
