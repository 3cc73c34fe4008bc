"""A sandbox call's limits do not depend on the machine's load: its CPU limit counts the CPU of all
its processes, its wall limit its own time (not the time the machine held it from a CPU), calls take
turns at the cores, and a call the machine starved is the harness's failure (a retryable infra
error), while a script that sleeps is stopped at its limit as on an idle machine.

Starvation is made deterministic with a CPU quota on the call's own cgroup leaf (`cpus`), and the
queue by holding every core's turn; nothing here depends on how loaded the machine is.
"""
from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import pytest

from armbench.engine.agent import run_episode
from armbench.engine.limits import RunLimits
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.tools import cgroups, sandbox
from armbench.tools.admission import admitted, usable_cores
from armbench.tools.base import ArmTools, ToolInfraError
from armbench.tools.call_usage import metered
from armbench.tools.sandbox import SandboxConfig, run_python
from armbench.tools.synthesized import SynthesizedTool, ToolSpec
from armbench.tools.web_tools import PythonTool
from armbench.types import ErrorKind, StopReason
from tests.support.models import caller

BWRAP_PROBLEM = sandbox.bwrap_problem(SandboxConfig().interpreter)
CPU_PROBLEM = cgroups.cgroup_problem() or (None if cgroups.counts_cpu() else "no cgroup CPU accounting")
needs_cpu_cgroup = pytest.mark.skipif(
    BWRAP_PROBLEM is not None or CPU_PROBLEM is not None, reason=f"{BWRAP_PROBLEM or CPU_PROBLEM}"
)
STARVED = {"cpus": 0.05, "wall_timeout_s": 1.0}  # a quota of 5% of a CPU: the call waits for the rest
TWO_BURNERS = """
import multiprocessing
def burn(_):
    while True:
        pass
with multiprocessing.Pool(2) as pool:
    pool.map(burn, range(2))
"""
SLEEPER = "import time\nprint('started', flush=True)\ntime.sleep(60)"


@pytest.mark.slow
@needs_cpu_cgroup
async def test_cpu_burning_processes_are_stopped_at_the_calls_cpu_limit_together():
    # Two processes burning 1 s of CPU each would each stay under a per-process RLIMIT_CPU of 1 s.
    tool = PythonTool(config=SandboxConfig(cpu_s=1, wall_timeout_s=20.0))
    with metered() as usage:
        outcome = await tool.invoke({"code": TWO_BURNERS})
    assert outcome.result["notice"] == "killed at the 1 s CPU limit", outcome.result
    assert not outcome.result["timed_out"]
    assert usage.limits_hit == ["cpu_limit"]
    assert usage.cpu_seconds >= 1.0, usage  # both processes stopped once their CPU together reached the limit


@pytest.mark.slow
@needs_cpu_cgroup
async def test_a_call_waits_for_a_free_core_and_its_limits_start_when_it_runs():
    async with AsyncExitStack() as held:
        for _ in range(usable_cores()):
            await held.enter_async_context(admitted())
        call = asyncio.create_task(run_python("print('ran')", SandboxConfig(wall_timeout_s=1.0)))
        await asyncio.sleep(1.5)  # longer than the call's wall limit
        assert not call.done()
    result = await call
    assert result.stdout == "ran\n" and result.killed_reason is None
    assert result.queue_seconds >= 1.5
    assert result.cpu_seconds is not None and result.cpu_seconds > 0


@pytest.mark.slow
@needs_cpu_cgroup
async def test_a_starved_call_is_a_retryable_infra_error_not_the_agents_timeout():
    tool = PythonTool(config=SandboxConfig(**STARVED))
    with metered() as usage, pytest.raises(ToolInfraError, match="starved"):
        await tool.invoke({"code": "while True:\n    pass"})
    assert usage.limits_hit == ["starved"]
    result = await run_python("while True:\n    pass", SandboxConfig(**STARVED))
    assert result.killed_reason == "starved" and not result.timed_out
    assert result.duration_s >= STARVED["wall_timeout_s"] * sandbox.BACKSTOP_FACTOR
    assert result.held_seconds > result.duration_s - STARVED["wall_timeout_s"]


@pytest.mark.slow
@needs_cpu_cgroup
async def test_a_starved_call_that_burns_cpu_as_fast_as_it_can_is_stopped_at_its_cpu_limit():
    """Given 1% of a CPU, an endless loop reaches the backstop (after 24 s, short of 1 s of CPU), yet
    it spent CPU at more than 1 s per 8 s of its own time, so on an idle machine it would have hit its
    1 s CPU limit first: the agent's `cpu_limit`, as at --concurrency 1, not the harness's starvation.
    (Idle, the clock counts about 65% of such a loop's own time as spent on a CPU; in a loaded `make
    test`, 23% once: the limit's 12.5% leaves room for that.) Not 3%: the kernel notices a spent quota
    at its next tick, so a loop given 3% once ran at 4.3% and spent its 1 s at 23 s, before the backstop."""
    result = await run_python("while True:\n    pass", SandboxConfig(cpus=0.01, wall_timeout_s=8, cpu_s=1))
    assert result.killed_reason == "cpu_limit", result
    assert result.duration_s >= 8 * sandbox.BACKSTOP_FACTOR  # the backstop stopped it (load only adds time)


@needs_cpu_cgroup
async def test_a_sleeper_is_the_agents_own_timeout_even_under_a_cpu_quota():
    # 2 s: at 5% of a CPU the interpreter's start alone takes ~0.6 s, and more on a busy machine
    tool = PythonTool(config=SandboxConfig(**{**STARVED, "wall_timeout_s": 2.0}))
    with metered() as usage:
        outcome = await tool.invoke({"code": SLEEPER})
    assert outcome.result["timed_out"] and outcome.result["stdout"] == "started\n"
    assert outcome.result["notice"].startswith("killed at the 2 s wall-clock limit")
    assert usage.limits_hit == ["wall_timeout"]


@pytest.mark.slow
@needs_cpu_cgroup
async def test_a_starved_synthesized_tool_call_ends_the_run_too():
    spec = ToolSpec("spin", "Spins.", {"type": "object", "properties": {}}, "def spin():\n    while True:\n        pass\n")
    tool = SynthesizedTool(spec, PythonTool(config=SandboxConfig(cpus=STARVED["cpus"])), "http://127.0.0.1:1", timeout_s=1.0)
    with pytest.raises(ToolInfraError, match="starved"):
        await tool.invoke({})


@pytest.mark.slow
@needs_cpu_cgroup
async def test_the_transcript_carries_each_calls_figures_and_the_run_its_totals(gpu_design, script_registry):
    @register_script("python-twice")
    def python_twice(turn):
        codes = ["print(sum(range(10**6)))", "while True:\n    pass"]
        seen = len(turn.tool_results())
        if seen < len(codes):
            return Reply(tool_calls=[ScriptedToolCall("python", {"code": codes[seen]})])
        return Reply(text="ANSWER: none")

    arm = ArmTools("browsing", [PythonTool(config=SandboxConfig(**STARVED))])
    episode = await run_episode(gpu_design.questions[0], arm, caller("scripted/python-twice"))
    assert (episode.stop_reason, episode.error_kind, episode.retryable) == (StopReason.infra_error, ErrorKind.infra, True)
    assert episode.tool_limits_hit == ["python:starved"]
    assert episode.tool_cpu_seconds > 0
    tool_messages = [message for message in episode.transcript if message["role"] == "tool"]
    assert len(tool_messages) == 1  # the starved call has no result: the run ended there
    figures = tool_messages[0]["usage"]
    assert set(figures) == {"seconds", "cpu_seconds", "queue_seconds", "limits_hit"}
    assert figures["cpu_seconds"] > 0 and figures["limits_hit"] == []


@pytest.fixture
def two_python_calls(script_registry):
    """A model that sleeps 1.5 s in the sandbox, then runs `print(1)`, then answers."""
    @register_script("sleep-then-python")
    def sleep_then_python(turn):
        codes = ["import time\ntime.sleep(1.5)", "print(1)"]
        seen = len(turn.tool_results())
        if seen < len(codes):
            return Reply(tool_calls=[ScriptedToolCall("python", {"code": codes[seen]})])
        return Reply(text="ANSWER: 1")

    return "scripted/sleep-then-python"


@needs_cpu_cgroup
async def test_a_run_timeout_while_a_call_waits_for_a_core_is_the_machines_doing(gpu_design, two_python_calls):
    async with AsyncExitStack() as held:
        for _ in range(usable_cores()):
            await held.enter_async_context(admitted())
        episode = await run_episode(gpu_design.questions[0], ArmTools("browsing", [PythonTool()]), caller(two_python_calls),
                                    limits=RunLimits(timeout=1.0))
    assert (episode.stop_reason, episode.error_kind, episode.retryable) == (StopReason.timeout, ErrorKind.infra, True)
    assert "waited for the harness (a free core" in episode.error


@pytest.mark.slow
@needs_cpu_cgroup
async def test_a_calls_wait_for_a_core_does_not_count_against_the_run_timeout(gpu_design, two_python_calls):
    """The first call queues 6 s, then sleeps 1.5 s: past a 7 s run timeout counted in wall time,
    inside it counted without the queue, which the deadline gives back as the call leaves the queue
    (not when it ends, which would be too late). The 5.5 s left over are for two sandbox starts
    and the model turns on a loaded machine (CI's three test workers and the Ray tests on two
    cores: 3.5 s was too few there once)."""
    async with AsyncExitStack() as held:
        for _ in range(usable_cores()):
            await held.enter_async_context(admitted())
        episode = asyncio.create_task(run_episode(gpu_design.questions[0], ArmTools("browsing", [PythonTool()]),
                                                  caller(two_python_calls), limits=RunLimits(timeout=7.0)))
        await asyncio.sleep(6.0)
    finished = await episode
    assert finished.stop_reason == StopReason.answered and finished.error is None, (
        finished.error, finished.wall_seconds, finished.tool_queue_seconds, finished.tool_usage)
    assert finished.wall_seconds > 7.0 and finished.tool_queue_seconds > 5.0
