"""Run a question's browsing solution as a plain-Python script against a replica on loopback."""
from __future__ import annotations

import subprocess
import sys

from armbench.questions import with_replica_addresses
from armbench.types import Question


def run_browsing_script(question: Question, base_url: str) -> list[str]:
    """The answer items the script prints, its `{replica:<domain>}` pointed at `base_url`."""
    browsing = question.solutions["browsing"]
    code = with_replica_addresses(browsing.calls[0].args, lambda domain: base_url.rstrip("/"))["code"]
    run = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return browsing.answer.apply({"stdout": run.stdout})
