"""The run engine on Ray (`--executor ray`) on a one-machine cluster of 2 CPUs: the same runs and
grades as the local executor; an actor killed mid-run loses and duplicates nothing; bad input is
one line and exit 2. The cluster is started once for the module (about 4 s)."""
import asyncio
import json
import sys
from collections import Counter

import pytest
import ray

from armbench.arms.environment import KEEP_WARM_ENV
from armbench.engine.plan import plan
from armbench.engine.ray_executor import ACTOR_NAME, ACTOR_NUMBERS
from armbench.engine.store import RunSetStore
from armbench.models.recording import recording_path
from armbench.questions import load_sets
from armbench.tools.browser import Browser
from armbench.types import RunConfig
from tests.support.models import run_set

pytestmark = pytest.mark.ray  # `make test` runs them (about 1 min); `pytest -m "not ray"` leaves them out

ARMS = ("browsing", "tooled")
SMALL_PLAN = ["--model", "scripted/oracle", "--domain", "gpus", "--set", "design", "--arm", "tooled", "--quiet"]


# Bad input first: these need no cluster, and ray is not yet joined in this process.

def test_a_ray_address_without_the_ray_executor_is_refused(cli, tmp_path):
    code, _out, err = cli("run", *SMALL_PLAN, "--ray-address", "127.0.0.1:6379", "--out", str(tmp_path / "s"))
    assert code == 2 and "add --executor ray" in err


@pytest.mark.parametrize(("address", "said"), [
    ("127.0.0.1:1", "cannot reach the Ray cluster at 127.0.0.1:1"),
    ("headnode", "--ray-address takes the head node's HOST:PORT"),
    ("ray://127.0.0.1:10001", "Ray Client) is not supported"),
])
def test_a_bad_or_unreachable_cluster_is_one_line_and_exit_2(cli, tmp_path, address, said):
    code, _out, err = cli("run", *SMALL_PLAN, "--executor", "ray", "--ray-address", address,
                          "--out", str(tmp_path / "s"))
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_the_ray_executor_without_ray_installed_says_how_to_install_it(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets where Ray is not installed
    code, _out, err = cli("run", *SMALL_PLAN, "--executor", "ray", "--out", str(tmp_path / "s"))
    assert code == 2 and "pip install -e '.[ray]'" in err


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def grades(store: RunSetStore) -> dict[str, tuple]:
    return {record.run_id: (record.correct, record.outcome) for record in store.records()}


async def test_the_oracle_on_two_actors_plays_every_planned_run_correctly(cluster, replica_env, tmp_path,
                                                                          monkeypatch):
    """The first question of every domain, both arms: each domain's replica, the browsing solutions'
    sandboxes and Chromium run on the actors (`make oracle` asks every question locally, where the
    oracle is fully correct on each, as here). The driver, which plays no run, starts no browser."""
    started_here = []
    start = Browser.start

    async def counted_start(browser: Browser) -> Browser:
        started_here.append(browser)
        return await start(browser)

    monkeypatch.setattr(Browser, "start", counted_start)
    question_sets = load_sets()
    firsts: dict[str, str] = {}  # domain: the first question of its first set
    for question_set in question_sets:
        firsts.setdefault(question_set.domain, question_set.questions[0].id)
    config = RunConfig(model="scripted/oracle", arms=ARMS, concurrency=4, questions=tuple(firsts.values()), executor="ray",
                       ray_actors=2)
    store = RunSetStore(tmp_path / "ray")
    result = await run_set(question_sets, config, store, show_progress=False)

    assert set(grades(store)) == {job.run_id for job in plan(question_sets, config)}
    assert set(grades(store).values()) == {(True, "fully_correct")}, [
        (record.run_id, record.error) for record in store.records() if not record.correct]
    assert len(result.records) == result.planned and result.halted is None
    assert all((store.directory / record.transcript_path).stat().st_size for record in store.records())
    assert json.loads(store.manifest_path.read_text())["config"]["executor"] == "ray"
    assert started_here == []


def newest_episode_actor() -> str:
    prefix = ACTOR_NAME.format("")
    names = [name for name in ray.util.list_named_actors() if name.startswith(prefix)]
    return max(names, key=lambda name: int(name.removeprefix(prefix)))


async def test_an_actor_killed_mid_run_loses_and_duplicates_nothing(cluster, replica_env, tmp_path,
                                                                    gpu_design, gpu_heldout):
    store = RunSetStore(tmp_path / "killed")
    # 0.5 s per model call, two calls a run: each actor has two runs in flight whenever it is killed.
    # --rpm and --record go through the cluster too: the gate actor, and recordings sent to the driver.
    config = RunConfig(model="scripted/oracle+latency=0.5", arms=("tooled",), runs=2, concurrency=4,
                       executor="ray", ray_actors=2, rpm=6000, record=True)
    numbered = next(ACTOR_NUMBERS)
    running = asyncio.create_task(run_set([gpu_design, gpu_heldout], config, store, show_progress=False))
    while len(store.records()) < 4:
        await asyncio.sleep(0.1)
    ray.kill(ray.get_actor(newest_episode_actor()))
    result = await running

    ids = [record.run_id for record in store.records()]
    planned = {job.run_id for job in plan([gpu_design, gpu_heldout], config)}
    assert Counter(ids) == Counter(planned)  # each planned run once: none lost, none twice
    assert result.planned == len(result.records) == len(planned) and result.halted is None
    assert all(record.correct for record in store.records())  # the re-played runs were played whole
    assert all(recording_path(store.directory, run_id).stat().st_size for run_id in planned)
    assert next(ACTOR_NUMBERS) >= numbered + 4  # two actors, then one in the killed one's place


async def test_an_actor_killed_while_starting_is_replaced(cluster, replica_env, tmp_path, gpu_design):
    """One actor (each start costs seconds of CPU): killed while starting, the run set has none until
    its replacement is up."""
    store = RunSetStore(tmp_path / "starting")
    config = RunConfig(model="scripted/oracle", arms=("tooled",), concurrency=2, executor="ray", ray_actors=1)
    numbered = next(ACTOR_NUMBERS)
    prefix = ACTOR_NAME.format("")
    running = asyncio.create_task(run_set([gpu_design], config, store, show_progress=False))
    while not any(name.startswith(prefix) and int(name.removeprefix(prefix)) > numbered
                  for name in ray.util.list_named_actors()):
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)  # an actor takes seconds to start (LiteLLM, Chromium): this one is still starting
    ray.kill(ray.get_actor(newest_episode_actor()))
    result = await running
    assert sorted(record.run_id for record in store.records()) == sorted(job.run_id for job in plan([gpu_design], config))
    assert result.halted is None and all(record.correct for record in store.records())
    assert next(ACTOR_NUMBERS) >= numbered + 3  # the actor, then one in the place of the one killed starting


def episode_actors() -> list[str]:
    prefix = ACTOR_NAME.format("")
    return [name for name in ray.util.list_named_actors() if name.startswith(prefix)]


async def test_kept_warm_the_next_run_set_plays_on_the_same_actors(cluster, replica_env, tmp_path, gpu_design,
                                                                     monkeypatch):
    """ARMBENCH_KEEP_WARM=1 (a notebook, this suite): the next run set of this driver takes the last
    one's actors, their process, imports and Chromium already up, and grades alike; with 0 they end
    with their run set. One actor a run set: each start costs seconds of CPU."""
    monkeypatch.setenv(KEEP_WARM_ENV, "1")
    config = RunConfig(model="scripted/oracle", arms=("tooled",), concurrency=2, executor="ray", ray_actors=1)
    first, second = RunSetStore(tmp_path / "first"), RunSetStore(tmp_path / "second")
    await run_set([gpu_design], config, first, show_progress=False)
    numbered = next(ACTOR_NUMBERS)
    await run_set([gpu_design], config, second, show_progress=False)
    assert next(ACTOR_NUMBERS) == numbered + 1  # no actor was made for the second run set
    assert set(grades(first).values()) == set(grades(second).values()) == {(True, "fully_correct")}

    monkeypatch.setenv(KEEP_WARM_ENV, "0")
    await run_set([gpu_design], config, RunSetStore(tmp_path / "cold"), show_progress=False)
    assert next(ACTOR_NUMBERS) >= numbered + 2  # a new actor: the warm one was not of this setting
    for _ in range(100):
        if not episode_actors():
            break
        await asyncio.sleep(0.1)
    assert not episode_actors()  # not kept: ended with the run set, and the warm ones before it
