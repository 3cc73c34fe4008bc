"""Run a question's browsing solution as a plain-Python script against a replica on loopback."""
from __future__ import annotations

import subprocess
import sys

from armbench.questions import solution, with_replica_addresses
from armbench.types import Question, Solution


def run_browsing_script(question: Question, base_url: str, browsing: Solution | None = None) -> list[str]:
    """The answer items the question's browsing script (stored or derived; or `browsing`) prints,
    its `{replica:<domain>}` pointed at `base_url`."""
    browsing = browsing or solution(question, "browsing")
    code = with_replica_addresses(browsing.calls[0].args, lambda domain: base_url.rstrip("/"))["code"]
    run = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return browsing.answer.apply({"stdout": run.stdout})
