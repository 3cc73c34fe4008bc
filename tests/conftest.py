import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from armbench.arms.environment import KEEP_WARM_ENV
from armbench.engine.store import RunSetStore
from armbench.models import get_model
from armbench.players.script_registry import SCRIPTS
from armbench.questions import load_set_file, set_path
from armbench.replicas import serve
from armbench.replicas.serve import MAX_OFFSET, port_is_free
from tests.support.run_sets import build_two_arm_run_set

# A pytest-xdist worker (`make test`) is started with COLUMNS=80, which a plain run has not: tests of
# what `bench` prints piped (120 columns unless COLUMNS says otherwise) must see the same either way.
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("COLUMNS") == "80" and not sys.stdout.isatty():
    del os.environ["COLUMNS"]

# Each pytest-xdist worker's replicas default to a port base of its own, apart from the other
# workers' and from 8301 (which `bench` run as a subprocess keeps): two workers' replicas never meet
# on a default, and one that finds its base taken still moves (a base set in the environment would not).
WORKER_PORT_SPAN = 200  # more than a base's MAX_OFFSET + 1 ports; eight workers stay below 10,000
if os.environ.get("PYTEST_XDIST_WORKER"):
    serve.DEFAULT_PORT_BASE += WORKER_PORT_SPAN * (1 + int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw")))

# A test process runs many run sets: each takes the replica server (and browser) the one
# before it kept, as a notebook may, instead of paying their start again. A test of a run set's own
# server still sees it start, die, restart and stop within the run set.
os.environ.setdefault(KEEP_WARM_ENV, "1")


def pytest_configure(config):
    """LiteLLM is configured (offline), and the scripted provider set up with its built-in scripts,
    before any test module imports LiteLLM or a test registers (and the fixture below restores)
    scripts; not in pytest-xdist's controller, which runs no test (LiteLLM's import is 3 s of CPU)."""
    if getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput"):
        return
    get_model("scripted/oracle")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with more tests marked `slow` (whole run sets, `bench` subprocesses, kills: up to a
    minute each) first, each module's tests kept together and in order: `make test` hands whole
    modules to its pytest-xdist workers in this order, so the long ones start early and short ones
    fill the end, instead of a worker ending the suite alone with a long module it met last."""
    slow = Counter(item.module for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.module])


@contextmanager
def settings_restored() -> Iterator[None]:
    """The ARMBENCH_* settings as the block found them, after it: those it set or changed are undone."""
    before = {key: value for key, value in os.environ.items() if key.startswith("ARMBENCH_")}
    try:
        yield
    finally:
        for key in [key for key in os.environ if key.startswith("ARMBENCH_") and key not in before]:
            del os.environ[key]
        os.environ.update(before)


@pytest.fixture(autouse=True)
def armbench_settings_end_with_the_test():
    """A run set whose default port base was taken moves, and says so in this process's environment
    (ARMBENCH_REPLICA_PORT_BASE); the next test starts from the settings this one found. Kept warm,
    a server left on a moved base would otherwise be the next `bench` subprocess's taken base."""
    with settings_restored():
        yield


@pytest.fixture
def gpu_design():
    return load_set_file(set_path("gpus", "design"))


@pytest.fixture
def gpu_heldout():
    return load_set_file(set_path("gpus", "heldout"))


@pytest.fixture
def script_registry():
    """Lets a test register scripts; removes them afterwards."""
    before = dict(SCRIPTS)
    yield SCRIPTS
    SCRIPTS.clear()
    SCRIPTS.update(before)


def free_port_base() -> int:
    """serve.free_port_base for a test's replicas, in a share of its range of this pytest-xdist
    worker's own: a base a test sets in the environment does not move when it is taken, so two
    workers' tests must never pick overlapping bases between their pick and their bind."""
    low, high = FREE_BASES
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    share = (high - low) // workers
    low += share * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    generator = random.Random()
    while True:
        base = generator.randrange(low, low + share - MAX_OFFSET)
        if all(port_is_free(base + offset) for offset in range(MAX_OFFSET + 1)):
            return base


FREE_BASES = (10_000, 32_768 - MAX_OFFSET)  # serve.free_port_base's range: below the ephemeral ports


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def replica_env():
    """Replicas on free ports with a short socket dir (UNIX socket paths are limited to ~107 bytes)."""
    with own_replica_settings() as directory:
        yield
    shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def own_replica_settings() -> Iterator[str]:
    """Replicas started in the block take a free port base and a short socket dir of their own (the
    dir is yielded: its replicas may serve past the block, so whoever stops them removes it)."""
    directory = tempfile.mkdtemp(prefix="ab-", dir="/tmp")
    os.chmod(directory, 0o755)  # the python sandbox runs as another user and must reach the sockets
    with settings_restored():
        os.environ.update({serve.PORT_BASE_ENV: str(free_port_base()), serve.SOCKET_DIR_ENV: directory})
        yield directory


@pytest.fixture(scope="session")
async def arm_env():
    """One replica server and one browser for the whole session, as a run set has, on replica
    settings of their own: the run sets of the worker's other tests keep the worker's default port
    base (and the server they keep warm there) to themselves."""
    from armbench.arms.environment import ArmEnvironment

    env = ArmEnvironment(["gpus"])
    with own_replica_settings() as directory:
        await env.__aenter__()
    try:
        yield env
    finally:
        await env.__aexit__()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def two_arm_run_set(tmp_path, gpu_design, gpu_heldout) -> RunSetStore:
    return build_two_arm_run_set(tmp_path / "two-arms", gpu_design, gpu_heldout)


@pytest.fixture
def cli(capsys):
    """`bench ARGS` in this process, as a user runs it but without an interpreter start and a LiteLLM
    import per call: returns (exit code, stdout, stderr). Like a process of its own, it sees no
    provider API key of the machine, `env` adds to its environment, and the armbench settings it
    sets there (a --questions-dir, the port base its replicas moved to) end with it. A library's
    one-time set-up stays, as its import does (LiteLLM points TIKTOKEN_CACHE_DIR at its tokenizers)."""
    from armbench.cli import main

    def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        saved = dict(os.environ)
        for key in [key for key in os.environ if key.endswith("_API_KEY")]:
            del os.environ[key]
        os.environ.update(env or {})
        try:
            with settings_restored():
                main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code or 0
        finally:
            for key in set(env or {}) - set(saved):  # `env` ends with the call too
                del os.environ[key]
            os.environ.update(saved)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        return code, captured.out, captured.err

    return invoke
SERVE_GPUS = [sys.executable, "-m", "armbench.cli", "mcp", "serve", "gpus"]


@pytest.fixture
def serve_gpus() -> list[str]:
    """The command line that serves the GPU tools over MCP stdio: `bench mcp serve gpus`."""
    return list(SERVE_GPUS)


@pytest.fixture
def http_gpus():
    """Starts `bench mcp serve gpus --http 0`; gives (process, the URL it announces); stops it."""
    process = subprocess.Popen([*SERVE_GPUS, "--http", "0"], stderr=subprocess.PIPE, text=True)
    announced = process.stderr.readline()
    assert "http://127.0.0.1:" in announced, announced
    yield process, announced.split()[-1]
    process.kill()
    process.wait(timeout=30)

