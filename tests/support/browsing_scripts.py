"""Run a question's browsing solution as a plain-Python script against a replica on loopback."""
from __future__ import annotations

import subprocess
import sys

from armbench.types import Question


def run_browsing_script(question: Question, expected_host: str, actual_host: str) -> list[str]:
    """The answer items the script prints, with the replica it expects (`127.0.0.1:<port>`)
    moved to where the test serves it."""
    browsing = question.solutions["browsing"]
    code = browsing.calls[0].args["code"].replace(expected_host, actual_host)
    run = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return browsing.answer.apply({"stdout": run.stdout})
