"""armbench's questions as a native inspect_ai task, for researchers who run their agents there:

    inspect eval armbench/questions -T domain=gpus -T arm=tooled -T set=heldout --model <any inspect model>

inspect finds the task through the `inspect_ai` entry point in pyproject.toml. Each sample is one
question. The task plays what `bench run` plays:
- the same system prompt, user prompt and budget of tool calls (a call past it is not made);
- the arm's tools, with the same names, descriptions and parameter schemas, but for what inspect's
  tool schema has no field for: `$ref`s are written out in place of `$defs`, and `title`,
  `minItems` and `maxItems` are not sent (the tools still enforce them, as tool errors);
- the replicas of every domain and one Chromium, started by the first sample of an eval (or eval
  set, whose tasks run at once) and kept warm when its last sample ends, for the next eval;
- the strict grader: inspect's CORRECT or INCORRECT, armbench's outcome and miss reason in the
  score's metadata. A tool whose backend broke (a dead replica, a starved sandbox) fails the
  sample: inspect records an error, never a wrong answer.

inspect-ai is an optional extra (`pip install -e '.[inspect]'`): nothing else imports this module.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams
from inspect_ai.util import LimitExceededError

from armbench.arms import ARMS
from armbench.arms.environment import ArmEnvironment, resources_prompt
from armbench.domains import DOMAINS, data_hash
from armbench.engine.agent import prompt_hash, system_prompt
from armbench.grading.strict import extract_answer, grade
from armbench.provenance import git_commit, version
from armbench.questions import load_set_file, set_path, tool_drift
from armbench.tools.base import ArmTools, OfferedTool, ToolOutcome
from armbench.types import DEFAULT_BUDGET, StopReason


@task
def questions(domain: str = "gpus", arm: str = "tooled", set: str = "heldout",  # -T set=..., as `bench run --set`
              budget: int = DEFAULT_BUDGET) -> Task:
    """One question set of one domain, in one arm, graded as `bench run` grades it."""
    if domain not in DOMAINS:
        raise ValueError(f"domain {domain!r}: one of {', '.join(sorted(DOMAINS))}")
    if arm not in ARMS or ARMS[arm].needs_tool_from:
        raise ValueError(f"arm {arm!r}: browsing or tooled (a synthesized tool needs `bench run --tool-from`)")
    path = set_path(domain, set)
    if not path.exists():
        raise ValueError(f"no question set {set!r} for {domain} ({path})")
    question_set = load_set_file(path)
    samples = [Sample(id=question.id, input=question.prompt(), target=question.answer,
                      metadata={"separator": question.separator})
               for question in question_set.questions]
    return Task(dataset=MemoryDataset(samples, name=f"{domain}-{set}"), solver=armbench_agent(domain, arm, budget),
                scorer=strict_answer(), name=f"armbench-{domain}-{set}-{arm}",
                metadata={"domain": domain, "set": set, "arm": arm, "budget": budget, "armbench": version(),
                          "git_commit": git_commit(), "heldout_tool_changed": tool_drift([question_set]),
                          **hashes(domain, arm, budget, question_set.content_hash())})


def hashes(domain: str, arm: str, budget: int, question_set_hash: str) -> dict[str, str]:
    """What a `bench run` record's hashes say (the questions, the arm's tools, the data, the
    prompt), for the eval's metadata: `bench import inspect` gives them to its run records."""
    env = ArmEnvironment([domain])
    return {"question_set_hash": question_set_hash,
            "tool_manifest_hash": env.manifest_hash(env.template(arm, domain), domain),
            "data_hash": data_hash([domain]),
            "prompt_hash": prompt_hash(budget, domain)}


@solver
def armbench_agent(domain: str, arm: str, budget: int = DEFAULT_BUDGET):
    """armbench's episode loop on an inspect model: generate, then call the tools the model asked
    for, one by one, until it answers or has spent its budget (a call past it is not made). What a
    run record counts (actions by tool, tool errors, model and tool seconds, a spent budget) goes
    in the sample's metadata under "episode", for the scorer and `bench import inspect`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = state.metadata["episode"] = {"stop_reason": None, "actions": 0, "actions_by_tool": {},
                                               "tool_errors": 0, "model_seconds": 0.0, "tool_seconds": 0.0}
        async with ENVIRONMENT.use() as env, env.open_arm(arm, domain) as tools:
            resources = resources_prompt({domain: env.target(domain).base_url})
            state.messages = [ChatMessageSystem(content=system_prompt(budget, resources)),
                              ChatMessageUser(content=state.input_text)]
            state.tools = [inspect_tool(tool) for tool in tools.tools]
            try:
                return await episode_loop(state, generate, tools, budget, episode)
            except LimitExceededError as limit:  # inspect's limit (--token-limit, ...): the run's stop reason
                if limit.type in INSPECT_LIMITS:
                    episode["stop_reason"] = INSPECT_LIMITS[limit.type].value
                raise

    return solve


# inspect's limits as `bench run`'s stop reasons: a cap on messages or turns is a budget of steps.
# An operator's or a custom limit is none of the agent's: `bench import inspect` excludes the run.
INSPECT_LIMITS = {"token": StopReason.token_cap, "cost": StopReason.cost_cap, "time": StopReason.timeout,
                  "working": StopReason.timeout, "message": StopReason.budget, "turn": StopReason.budget}


async def episode_loop(state: TaskState, generate: Generate, tools: ArmTools, budget: int,
                       episode: dict[str, Any]) -> TaskState:
    """Generate and call tools until the model answers, the budget is spent or its context is full."""
    while True:
        started = time.perf_counter()
        state = await generate(state, tool_calls="none")
        episode["model_seconds"] += time.perf_counter() - started
        if state.output.stop_reason == "model_length":
            episode["stop_reason"] = StopReason.context_window.value
            return state
        calls = state.output.message.tool_calls or []
        if not calls:
            return state
        for call in calls:
            if episode["actions"] >= budget:
                episode["stop_reason"] = StopReason.budget.value
                return state
            episode["actions"] += 1
            episode["actions_by_tool"][call.function] = episode["actions_by_tool"].get(call.function, 0) + 1
            started = time.perf_counter()
            outcome = await call_tool(tools, call.function, call.arguments)
            episode["tool_seconds"] += time.perf_counter() - started
            episode["tool_errors"] += outcome.is_error
            state.messages.append(ChatMessageTool(content=outcome.to_message_content(), tool_call_id=call.id,
                                                  function=call.function))


async def call_tool(tools: ArmTools, name: str, arguments: dict[str, Any]) -> ToolOutcome:
    """The tool's outcome, as the episode loop would show it; a ToolInfraError propagates."""
    tool = tools.tool(name)
    return tools.unknown_tool(name) if tool is None else await tool.invoke(arguments)


def inspect_tool(tool: OfferedTool) -> ToolDef:
    """The tool as inspect offers it: the same name, description and parameters."""
    function = tool.schema()["function"]

    async def execute(**arguments: Any) -> str:
        return (await tool.invoke(arguments)).to_message_content()

    parameters = ToolParams.model_validate(without_refs(function["parameters"]))
    return ToolDef(execute, name=function["name"], description=function["description"], parameters=parameters)


def without_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema with each `$ref` to its `$defs` written out in place (and `$defs` dropped)."""
    definitions = schema.get("$defs", {})

    def written_out(node: Any) -> Any:
        if isinstance(node, list):
            return [written_out(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return written_out(definitions[node["$ref"].rsplit("/", 1)[-1]])
        return {key: written_out(value) for key, value in node.items() if key != "$defs"}

    return written_out(schema)


@scorer(metrics=[accuracy(), stderr()])
def strict_answer():
    """armbench's strict grader: the last ANSWER line's items against the reference's, as sets."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = extract_answer(state.output.completion)
        stop_reason = StopReason(state.metadata["episode"]["stop_reason"] or
                                 (StopReason.answered if answer else StopReason.stopped))
        graded = grade(answer, list(target.target), state.metadata["separator"], stop_reason=stop_reason)
        miss = graded.miss_reason.value if graded.miss_reason else None
        return Score(value=CORRECT if graded.correct else INCORRECT, answer=answer, explanation=graded.outcome.value,
                     metadata={"outcome": graded.outcome.value, "miss_reason": miss})

    return score


class SharedEnvironment:
    """The replicas (every domain's: the tasks of an eval set run at once, one server serves them
    all) and the Chromium that samples share: opened by the first sample, closed (kept warm, so
    the next eval takes them back at once) when the last one ends."""

    def __init__(self) -> None:
        self.env: ArmEnvironment | None = None
        self.users = 0
        self.lock: asyncio.Lock | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    @asynccontextmanager
    async def use(self) -> AsyncIterator[ArmEnvironment]:
        if self.loop is not asyncio.get_running_loop():  # a new eval: what an ended one opened is closed
            self.loop, self.lock, self.env, self.users = asyncio.get_running_loop(), asyncio.Lock(), None, 0
        assert self.lock is not None
        async with self.lock:
            if self.env is None:
                env = ArmEnvironment(sorted(DOMAINS), keep_warm=True)
                await env.__aenter__()
                self.env = env
            self.users += 1
        try:
            yield self.env
        finally:
            async with self.lock:
                self.users -= 1
                if self.users == 0:
                    env, self.env = self.env, None
                    await env.__aexit__(None, None, None)


ENVIRONMENT = SharedEnvironment()

