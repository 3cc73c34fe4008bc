"""From a finished episode to its run record: graded, unless the provider never let it finish or an
injected fault corrupted its tool calls."""
from __future__ import annotations

from armbench.domains import data_hash
from armbench.engine.agent import Episode
from armbench.engine.plan import Job
from armbench.grading.strict import grade
from armbench.types import ErrorKind, RunConfig, RunRecord


def to_record(
    job: Job,
    config: RunConfig,
    episode: Episode,
    *,
    question_set_hash: str,
    tool_manifest_hash: str,
    prompt_hash: str,
    transcript_path: str,
    replay_divergence: object | None = None,
    synthesized_tool_hash: str | None = None,
    recorded: RunRecord | None = None,
) -> RunRecord:
    """`recorded`: a replayed run's record in its recording, whose model time it reports (the replay's
    own is the time a file takes to read), so time figures mean what they meant when recorded."""
    question = job.question
    excluded = episode.error_kind is not None and episode.error_kind.is_excluded  # never graded as a miss
    graded = None if excluded else grade(
        episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason
    )
    return RunRecord(
        run_id=job.run_id,
        question_id=question.id,
        domain=question.domain,
        set=question.set,
        arm=job.arm,
        repeat=job.repeat,
        model=config.model,
        provider=episode.provider,
        answer=episode.answer,
        correct=None if graded is None else graded.correct,
        outcome=None if graded is None else graded.outcome,
        miss_reason=None if graded is None else graded.miss_reason,
        stop_reason=episode.stop_reason,
        error=episode.error,
        error_kind=episode.error_kind,
        retryable=episode.retryable and episode.error_kind is ErrorKind.infra,
        cost_usd=episode.usage.cost_usd,
        prompt_tokens=episode.usage.prompt_tokens,
        completion_tokens=episode.usage.completion_tokens,
        actions=episode.actions,
        actions_by_tool=dict(episode.actions_by_tool),
        tool_errors=episode.tool_errors,
        empty_tool_args=episode.empty_tool_args,
        retries=episode.retries,
        injected_faults=episode.injected_faults,
        call_providers=episode.call_providers,
        wall_seconds=episode.wall_seconds + (recorded.model_seconds - episode.model_seconds if recorded else 0.0),
        model_seconds=recorded.model_seconds if recorded else episode.model_seconds,
        replayed_times=recorded is not None,
        tool_seconds=episode.tool_seconds,
        tool_cpu_seconds=episode.tool_cpu_seconds,
        tool_queue_seconds=episode.tool_queue_seconds,
        tool_limits_hit=episode.tool_limits_hit,
        question_set_hash=question_set_hash,
        tool_manifest_hash=tool_manifest_hash,
        data_hash=data_hash([question.domain]),
        prompt_hash=prompt_hash,
        transcript_path=transcript_path,
        replay_divergence=None if replay_divergence is None else str(replay_divergence),
        synthesized_tool_hash=synthesized_tool_hash,
        web=None if config.web.is_kind else config.web.name,
    )
