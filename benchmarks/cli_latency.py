"""How fast the commands that run nothing answer: `bench run` refusing a bad flag (every flag is
checked before LiteLLM, Playwright or polars load, so a typo costs well under a second), `bench
plan` over the whole bank (it prices a LiteLLM model from the cost map file, without LiteLLM), and
`bench run` refusing a provider that is down at its preflight (3 attempts, each refused at once: not
the 5 s request timeout 3 times over); and how soon `bench replicas serve` (every domain) and
`bench mcp serve` exit after a Ctrl-C (target 1 s). The tests check what loads and what is said
(tests/test_cli.py, tests/analysis/test_planning.py); the times are measured here, where a loaded
machine does not fail a test."""
from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import time

from figures import record

COMMANDS = {  # name: (arguments, target seconds)
    "refusal": (["run", "--model", "scripted/oracle", "--domain", "nosuch"], 1.0),
    "plan": (["plan", "--model", "openai/gpt-4o-mini", "--domain", "all", "--arm", "all", "--set", "all",
              "--runs", "3"], 3.0),
    "preflight, provider down": (["run", "--model", "ollama/llama3", "--request-timeout", "5"], 15.0),
}
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


def seconds(arguments: list[str], repeats: int = 5) -> list[float]:
    command = [sys.executable, "-c", TIMED, *arguments]
    return [float(subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
            for _ in range(repeats)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


SERVERS = {  # name: (arguments, the line the server prints once it serves)
    "replicas serve, every domain: exit after Ctrl-C": (["replicas", "serve"], "ready:"),
    "mcp serve gpus: exit after Ctrl-C": (["mcp", "serve", "gpus", "--http", "{port}"], "serving gpus tools"),
}
STOP_TARGET_S = 1.0


def stop_seconds(arguments: list[str], ready: str) -> float:
    """Start the server in a process group of its own (as a terminal would), wait until it serves,
    send the group SIGINT (a terminal's Ctrl-C) and time its exit."""
    command = [sys.executable, "-m", "armbench.cli", *(a.format(port=free_port()) for a in arguments)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    for line in server.stdout:
        if line.startswith(ready):
            break
    started = time.perf_counter()
    os.killpg(server.pid, signal.SIGINT)
    server.wait(timeout=60)
    return time.perf_counter() - started


def main() -> None:
    os.environ["OLLAMA_API_BASE"] = f"http://127.0.0.1:{free_port()}"  # no server there: the provider is down
    for name, (arguments, target_s) in COMMANDS.items():
        timed = seconds(arguments)
        median = statistics.median(timed)
        verdict = "ok" if median < target_s else "OVER TARGET"
        print(f"cli {name}: median {median:.2f} s (min {min(timed):.2f}, max {max(timed):.2f}) over "
              f"{len(timed)} runs; target < {target_s:g} s: {verdict}")
        record(f"cli {name}", median, "s", target_s)
    for name, (arguments, ready) in SERVERS.items():
        timed = [stop_seconds(arguments, ready) for _ in range(3)]
        median = statistics.median(timed)
        verdict = "ok" if median < STOP_TARGET_S else "OVER TARGET"
        print(f"cli {name}: median {median:.2f} s (min {min(timed):.2f}, max {max(timed):.2f}) over "
              f"{len(timed)} runs; target < {STOP_TARGET_S:g} s: {verdict}")
        record(f"{name.split(',')[0].split(':')[0]}: exit after Ctrl-C", median, "s", STOP_TARGET_S)


if __name__ == "__main__":
    main()
