import subprocess
import sys

import pytest

import harness.models  # noqa: F401  (registers the scripted provider)
from harness.models.scripted import SCRIPTS
from harness.questions import load_set_file, set_path


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


SERVE_GPUS = [sys.executable, "-m", "harness.cli", "mcp", "serve", "gpus"]


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
