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


@pytest.fixture
def cli(capsys):
    """`bench` in this process (no LiteLLM import per call): returns (exit code, stdout, stderr)."""
    from harness.cli import main

    def invoke(*args: str) -> tuple[int, str, str]:
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code or 0
        captured = capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        return code, captured.out, captured.err

    return invoke
