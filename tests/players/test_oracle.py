"""The oracle plays stored solutions, which name replicas, never ports; one that cannot reach its
replica is the oracle's failure (an infra error naming the cause), never a graded miss."""
import pytest

from armbench.domains import replica_address
from armbench.engine.agent import run_episode
from armbench.players.scripts import questions_by_prompt
from armbench.questions import solution, with_replica_addresses
from armbench.tools.base import ArmTools
from armbench.tools.sandbox import ReplicaRoute
from armbench.tools.web_tools import web_tools
from armbench.types import ErrorKind, StopReason
from tests.support.models import caller


def a_browsing_question(domain: str):
    return next(q for q in questions_by_prompt().values() if q.domain == domain and "browsing" in q.solutions)


def test_solutions_name_replicas_and_are_played_with_todays_address(replica_env):
    question = a_browsing_question("gpus")
    code = solution(question, "browsing").calls[0].args["code"]
    assert "SITE_BASE = '{replica:gpus}'" in code and "127.0.0.1" not in code
    played = with_replica_addresses(solution(question, "browsing").calls[0].args)["code"]
    assert f"SITE_BASE = '{replica_address('gpus')}'" in played and "{replica:" not in played


@pytest.mark.slow
async def test_a_solution_that_cannot_reach_its_replica_is_an_infra_error_not_a_miss(replica_env, tmp_path):
    question = a_browsing_question("funds")
    port = int(replica_address("funds").rsplit(":", 1)[1])
    nothing_there = ReplicaRoute(port=port, socket_path=str(tmp_path / "no-replica.sock"))
    episode = await run_episode(question, ArmTools("browsing", web_tools([nothing_there])), caller("scripted/oracle"))
    assert (episode.stop_reason, episode.error_kind) == (StopReason.infra_error, ErrorKind.infra)
    assert "the oracle's stored solution failed at call 1 (python): exit code 1" in episode.error
    assert episode.answer is None
