"""The run engine on a Ray cluster (`bench run --executor ray`): episodes on actors, records here.

Each episode actor is one worker process on some node. It owns what a local run set owns: the
replicas (on the driver's machine, the driver's, which live as long as the run set; elsewhere its
own, on a free port base with a private socket folder, so an actor that dies takes no other actor's
replicas with it), one Chromium, the sandboxes and the model client; it plays episodes
with the local executor's site (executor.InProcess), so the agent loop is the same. The driver
keeps the queue: its `concurrency` workers are spread over the actors (worker i plays on actor
i mod N), each sending one job at a time and getting back the episode with its transcript (and,
with --record, its recording). Only the driver grades, appends to runs.jsonl and writes files, so
resume, --max-cost, --max-infra-errors and the manifest mean exactly what they mean locally.

An actor (or its node) that dies fails the calls in flight on it. Nothing was recorded for those
runs, so each goes back to its worker, which plays it again on the actor started in the dead one's
place (Ray places it on a live node): nothing is lost or written twice. Only when replacements keep
failing does the run set stop (ExecutorLost): finished runs kept, --resume for the rest.

With ARMBENCH_KEEP_WARM=1 the actors outlive their run set: the next run set of this driver that
would make the same actors takes them (WarmActors), their process, imports and Chromium already up.

--rpm is one limit for the whole cluster: a small actor holds the run set's RpmLimiter and every
episode actor's model client asks it for a permit before each call.

Ray is imported only here, and only when a run set asks for it.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

from armbench.arms.environment import keeps_warm
from armbench.engine.executor import (
    ExecutorLost,
    InProcess,
    Played,
    SiteScope,
    arm_templates,
    open_environment,
    prompt_resources,
    tool_manifest_hashes,
)
from armbench.engine.plan import Job
from armbench.errors import UserError, first_line
from armbench.models import get_model
from armbench.models.ratelimit import RpmLimiter
from armbench.models.recording import recording_path
from armbench.replicas.serve import PORT_BASE_ENV, SOCKET_DIR_ENV, free_port_base
from armbench.types import RunConfig

SHARED_ENV_PREFIX = "ARMBENCH_"  # the driver's settings (question bank, domains, ...) every actor gets too
PROBE_TIMEOUT_S = 5.0  # to reach the head node: ray.init itself would retry for minutes
STOP_TIMEOUT_S = 30.0  # for actors to close their browsers and replicas before they are killed
REPLACEMENTS_PER_ACTOR = 3  # over the run set: an actor that keeps dying means something is wrong
ACTOR_NAME = "armbench-episodes-{}"  # what `ray list actors` shows, numbered in this driver's order
ACTOR_NUMBERS = itertools.count()


def connect(address: str | None) -> None:
    """Join the Ray cluster at `address` (None: $RAY_ADDRESS, a cluster running on this machine, else a
    new one here). A UserError, one line, for anything the user can fix."""
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray on this machine: pip install -e '.[ray]'") from None
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS")  # what ray.init would read: probed the same way
    if address not in (None, "auto", "local"):
        _probe(address)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise UserError(f"cannot join the Ray cluster at {address or 'auto'}: {first_line(error)}") from None


def _probe(address: str) -> None:
    """Refuse an address that is not HOST:PORT, or where nothing listens, at once."""
    if address.startswith("ray://"):
        raise UserError("--ray-address ray://... (Ray Client) is not supported: run bench on a node of the "
                        "cluster and give the head node's HOST:PORT")
    host, colon, port = address.rpartition(":")
    if not (colon and host and port.isdigit() and 0 < int(port) < 65536):
        raise UserError(f"--ray-address takes the head node's HOST:PORT (as `ray start --head` prints it, e.g. "
                        f"10.0.0.5:6379) or auto; got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as error:
        raise UserError(f"cannot reach the Ray cluster at {address}: {error.strerror or error}; is "
                        "`ray start --head` running there?") from None


class RpmGate:
    """The run set's one --rpm limit, held by an actor of its own."""

    def __init__(self, rpm: int):
        self.limiter = RpmLimiter(rpm)

    async def acquire(self) -> None:
        await self.limiter.acquire()


class GatePermits:
    """An episode actor's limiter: a permit from the gate actor per model call."""

    def __init__(self, gate: Any):
        self.gate = gate

    async def acquire(self) -> None:
        await self.gate.acquire.remote()


class EpisodeActor:
    """One worker process of the cluster: its own environment and model client for each run set it
    starts, playing the jobs the driver sends and handing back each finished episode. Kept warm
    (ARMBENCH_KEEP_WARM=1), it plays the next run set of the same driver too, its process, imports,
    Chromium and replicas already up."""

    def __init__(self, driver_node: str, settings: dict[str, str]):
        """`settings`: the driver's ARMBENCH_* variables, set here before anything reads them (as
        arguments, not a runtime_env: an actor with one cannot take a worker Ray started beforehand,
        and waits for a new process to start)."""
        os.environ.update(settings)
        self.driver_node = driver_node
        self.stack: AsyncExitStack | None = None
        self.site: InProcess | None = None
        self.scratch: Path | None = None

    async def start(self, config: RunConfig, domains: list[str], run_ids: list[str], gate: Any | None,
                    driver_scratch: str) -> dict[str, str]:
        """Open a run set's environment; returns its tool manifest hashes, for the driver to compare
        with its own."""
        import ray

        await self.stop()  # a run set that ended without stopping it (its driver was interrupted)
        self.stack = AsyncExitStack()
        # Its --record files, until sent: on the driver's node inside the run set's scratch folder,
        # which the driver removes at the end, so an actor that dies leaves nothing behind there.
        here = Path(driver_scratch) if Path(driver_scratch).is_dir() else None
        self.scratch = Path(tempfile.mkdtemp(prefix="armbench-actor-", dir=here))
        self.stack.callback(shutil.rmtree, self.scratch, ignore_errors=True)
        beside_driver = ray.get_runtime_context().get_node_id() == self.driver_node
        if not beside_driver:
            self._private_replicas()
        env = await self.stack.enter_async_context(open_environment(domains, config, not beside_driver))
        model = get_model(config.model)
        if config.price_per_million:
            model.set_price(*config.price_per_million)
        permits = GatePermits(gate) if gate is not None else None
        callers = model.callers(config, run_ids, self.scratch, permits)
        self.site = InProcess(env, callers, config, prompt_resources(env))
        return tool_manifest_hashes(env, arm_templates(env, config.arms, domains))

    def _private_replicas(self) -> None:
        """Replicas of this actor's own, on a free port base (the driver's settings name the driver's)."""
        sockets = Path(tempfile.mkdtemp(prefix="ab-", dir="/tmp"))  # short: UNIX socket paths are limited
        sockets.chmod(0o755)  # the python sandbox runs as another user and must reach the sockets
        os.environ.update({PORT_BASE_ENV: str(free_port_base()), SOCKET_DIR_ENV: str(sockets)})
        self.stack.callback(shutil.rmtree, sockets, ignore_errors=True)

    async def play(self, job: Job) -> Played:
        assert self.site is not None and self.scratch is not None, "start() first"
        played = await self.site.play(job)
        recorded = recording_path(self.scratch, job.run_id)
        if recorded.exists():
            played.recording = recorded.read_bytes()
            recorded.unlink()
        return played

    async def stop(self) -> None:
        """Close the run set's environment (a warm actor keeps its process for the next)."""
        stack, self.stack, self.site = self.stack, None, None
        if stack is not None:
            await stack.aclose()


class WarmActors:
    """The episode actors this driver keeps between run sets (ARMBENCH_KEEP_WARM=1), with what they
    were made for: the next run set takes them when it would make the same ones."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.made_for: tuple = ()

    def take(self, made_for: tuple) -> list[Any]:
        """The kept actors when they were made for the same (they are no longer kept then); else
        none, the kept ones ended."""
        if self.kept and made_for == self.made_for:
            kept, self.kept = self.kept, []
            return kept
        self.drop()
        return []

    def keep(self, actors: list[Any], made_for: tuple) -> None:
        self.drop()
        self.kept, self.made_for = actors, made_for

    def drop(self) -> None:
        kill_quietly(self.kept)
        self.kept = []


def kill_quietly(actors: list[Any]) -> None:
    """End actors, alive or not, of this Ray session or an earlier one."""
    if not actors:
        return
    import ray

    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor)


WARM_ACTORS = WarmActors()


class ActorPool:
    """The run set's episode actors, one per slot; a slot's actor that dies is replaced."""

    def __init__(self, config: RunConfig, domains: list[str], run_ids: list[str], tool_manifests: dict[str, str]):
        import ray

        self.ray = ray
        self.count = min(config.ray_actors or sum(node["Alive"] for node in ray.nodes()), config.concurrency)
        self.expected = tool_manifests
        self.settings = {name: value for name, value in os.environ.items() if name.startswith(SHARED_ENV_PREFIX)}
        self.gate = ray.remote(RpmGate).options(num_cpus=0).remote(config.rpm) if config.rpm else None
        self.actor_class = ray.remote(EpisodeActor)
        self.actor_options = dict(
            num_cpus=0, scheduling_strategy="SPREAD",
            max_concurrency=math.ceil(config.concurrency / self.count) + 2,  # its workers' jobs, start and stop
        )
        self.scratch = tempfile.mkdtemp(prefix="armbench-actors-")  # the actors' on this node, removed at close
        self.driver_node = ray.get_runtime_context().get_node_id()
        self.made_for = (ray.get_runtime_context().get_job_id(), self.driver_node, self.count,
                         repr(self.actor_options), sorted(self.settings.items()))
        self.run_set = (config, domains, run_ids, self.gate, self.scratch)
        self.warm = keeps_warm()
        self.actors: list[Any] = []
        self.replacements_left = REPLACEMENTS_PER_ACTOR * self.count
        self.lock = asyncio.Lock()

    def _new_actor(self) -> Any:
        name = ACTOR_NAME.format(next(ACTOR_NUMBERS))
        return self.actor_class.options(name=name, **self.actor_options).remote(self.driver_node, self.settings)

    async def start(self) -> None:
        """The run set's actors: those the last run set kept warm (when it made them alike), else new."""
        if not self.warm:
            WARM_ACTORS.drop()  # kept by an earlier run set, and not for this one
        self.actors = WARM_ACTORS.take(self.made_for) or [self._new_actor() for _ in range(self.count)]
        await asyncio.gather(*(self._start(slot) for slot in range(self.count)))

    async def _start(self, slot: int) -> None:
        """The slot's actor started; one that died while starting is replaced like one dying mid-run,
        one whose start raised (a node not set up, a recording missing) stops the run set, saying why."""
        actor = self.actors[slot]
        try:
            await self._started(actor)
        except self.ray.exceptions.RayError as error:
            if not self.died(error):
                raise ExecutorLost(f"a Ray actor could not start: {first_line(error)}") from None
            await self.replace(slot, actor)

    def died(self, error: BaseException) -> bool:
        """Whether the actor itself (or its node) is gone: not a task that raised, even an error of
        another actor's it passes on (the --rpm gate's)."""
        exceptions = self.ray.exceptions
        return isinstance(error, exceptions.RayActorError) and not isinstance(error, exceptions.RayTaskError)

    async def _started(self, actor: Any) -> None:
        """Wait for `actor`'s environment; refuse one whose tools differ from the driver's."""
        hashes = await actor.start.remote(*self.run_set)
        if hashes != self.expected:
            differ = sorted(key for key in self.expected if hashes.get(key) != self.expected[key])
            raise ExecutorLost(f"a Ray actor's tools differ from this machine's ({', '.join(differ)}): every node "
                               "needs the same checkout, set up with `make setup`")

    async def replace(self, slot: int, dead: Any) -> None:
        """Put a new actor in `slot`, where `dead` died; ExecutorLost once replacements keep failing."""
        async with self.lock:
            if self.actors[slot] is not dead:
                return  # another of the slot's workers replaced it already
            while True:
                if self.replacements_left == 0:
                    raise ExecutorLost(f"Ray actors died more than {REPLACEMENTS_PER_ACTOR * self.count} times")
                self.replacements_left -= 1
                self.ray.kill(dead)
                self.actors[slot] = dead = self._new_actor()
                try:
                    await self._started(dead)
                    return
                except self.ray.exceptions.RayError as error:
                    if not self.died(error):
                        raise ExecutorLost(f"a Ray actor could not start: {first_line(error)}") from None

    def site(self, worker: int) -> ActorSite:
        return ActorSite(self, worker % self.count)

    async def close(self) -> None:
        """Let the actors close the run set's environments, then end them, or keep them warm when every
        one stopped in order; the gate ends with its run set."""
        stops = asyncio.gather(*(actor.stop.remote() for actor in self.actors), return_exceptions=True)
        try:
            stopped = await asyncio.wait_for(stops, STOP_TIMEOUT_S)
        except TimeoutError:
            stopped = [TimeoutError()]
        if self.warm and not any(isinstance(outcome, BaseException) for outcome in stopped):
            WARM_ACTORS.keep(self.actors, self.made_for)
        else:
            kill_quietly(self.actors)
        kill_quietly([self.gate] if self.gate is not None else [])
        shutil.rmtree(self.scratch, ignore_errors=True)


class ActorSite:
    """A driver worker's site: the actor of its slot."""

    def __init__(self, pool: ActorPool, slot: int):
        self.pool, self.slot = pool, slot

    async def play(self, job: Job) -> Played:
        while True:
            actor = self.pool.actors[self.slot]
            try:
                return await actor.play.remote(job)
            except self.pool.ray.exceptions.RayError as error:
                if not self.pool.died(error):  # the episode raised, or the --rpm gate is gone: no actor died
                    raise ExecutorLost(f"a Ray actor failed playing {job.run_id}: {first_line(error)}") from None
                # The actor or its node died with this run in flight, unrecorded: play it again on the
                # actor that takes the dead one's place.
                await self.pool.replace(self.slot, actor)


@asynccontextmanager
async def ray_sites(config: RunConfig, domains: list[str], run_ids: list[str],
                    tool_manifests: dict[str, str]) -> AsyncIterator[SiteScope]:
    """Episode actors started, checked against the driver's tools, and ended with the run set."""
    connect(config.ray_address)
    pool = ActorPool(config, domains, run_ids, tool_manifests)
    try:
        await pool.start()
        yield lambda worker: nullcontext(pool.site(worker))
    finally:
        await pool.close()
