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


@pytest.fixture(scope="session")
async def arm_env():
    """One replica server and one browser for the whole session, as a run set has."""
    from arms import ArmEnvironment

    async with ArmEnvironment(["gpus"]) as env:
        yield env
