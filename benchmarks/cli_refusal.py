"""How fast `bench run` refuses a bad flag: every flag is checked before LiteLLM, Playwright or polars
load, so a typo costs well under a second (tests/test_cli.py checks that nothing heavy loads; the
time is measured here, where a loaded machine does not fail a test)."""
from __future__ import annotations

import statistics
import subprocess
import sys

TARGET_S = 1.0
TIMED = """
import sys, time
start = time.perf_counter()
from armbench.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(time.perf_counter() - start)
"""


def refusal_seconds(repeats: int = 5) -> list[float]:
    command = [sys.executable, "-c", TIMED, "run", "--model", "scripted/oracle", "--domain", "nosuch"]
    return [float(subprocess.run(command, capture_output=True, text=True, check=True).stdout) for _ in range(repeats)]


def main() -> None:
    seconds = refusal_seconds()
    median = statistics.median(seconds)
    verdict = "ok" if median < TARGET_S else "OVER TARGET"
    print(f"cli refusal: median {median:.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f}) over "
          f"{len(seconds)} runs; target < {TARGET_S:g} s: {verdict}")


if __name__ == "__main__":
    main()
