"""The cores' turns are the machine's: a turn another process holds is waited for (Ray actors beside
the driver, or two `bench run`s, never run more CPU-heavy calls at once than there are cores), and a
holder killed with SIGKILL leaves nothing stale."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from armbench.tools import admission
from armbench.tools.admission import TURNS_DIR_ENV, admitted, usable_cores
from armbench.tools.base import ToolInfraError

HOLD_EVERY_TURN = """
import time
from armbench.tools.admission import try_turn, turns_folder, usable_cores
held = [try_turn(turns_folder(), usable_cores()) for _ in range(usable_cores())]
print("held" if None not in held else "missed", flush=True)
time.sleep(60)
"""


async def test_a_turn_another_process_holds_is_waited_for_until_the_holder_dies(tmp_path, monkeypatch):
    monkeypatch.setenv(TURNS_DIR_ENV, str(tmp_path))
    holder = subprocess.Popen([sys.executable, "-c", HOLD_EVERY_TURN], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, TURNS_DIR_ENV: str(tmp_path)})
    try:
        assert holder.stdout.readline().strip() == "held"

        async def enter() -> float:
            async with admitted() as queued_s:
                return queued_s

        waiting = asyncio.create_task(enter())
        await asyncio.sleep(0.5)
        assert not waiting.done()  # every core's turn is the other process's
        holder.send_signal(signal.SIGKILL)
        queued_s = await asyncio.wait_for(waiting, timeout=10)
    finally:
        holder.kill()
        holder.wait()
    assert queued_s >= 0.5


async def test_one_process_takes_as_many_turns_at_once_as_there_are_cores(tmp_path, monkeypatch):
    monkeypatch.setenv(TURNS_DIR_ENV, str(tmp_path))
    entered = 0
    release = asyncio.Event()

    async def hold() -> None:
        nonlocal entered
        async with admitted():
            entered += 1
            await release.wait()

    holders = [asyncio.create_task(hold()) for _ in range(usable_cores() + 1)]
    await asyncio.sleep(0.3)
    assert entered == usable_cores()  # and the one more waits
    release.set()
    await asyncio.wait_for(asyncio.gather(*holders), timeout=10)
    assert entered == usable_cores() + 1


async def test_a_turn_held_past_the_wait_limit_is_an_infra_error_naming_its_holder(tmp_path, monkeypatch):
    """A stuck holder must not hold up every process of the machine: the waiting call ends as the
    harness's fault, and says who holds the turns."""
    monkeypatch.setenv(TURNS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(admission, "TURN_WAIT_LIMIT_S", 1.0)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_EVERY_TURN], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, TURNS_DIR_ENV: str(tmp_path)})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ToolInfraError, match=f"no core was free for 1 s: .* held by pids {holder.pid}"):
            async with admitted():
                pass
    finally:
        holder.kill()
        holder.wait()
    async with admitted() as queued_s:  # the turn it waited for is not kept, and the holder's are free
        assert queued_s < 5
