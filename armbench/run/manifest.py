"""The run set's manifest: what was run, with which code, questions, tools, data and prompt.

It is also what `--resume` checks: a run set is only continued by the same model over the same
plan — same question sets, tool manifests, data, system prompt and repeats — so that every record
in it measures the same thing. Engine settings (concurrency, limits, retries) may change.
"""
from __future__ import annotations

import datetime as dt
import platform
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from armbench.domains import data_hash
from armbench.errors import UserError
from armbench.paths import ROOT
from armbench.questions import QuestionSet
from armbench.types import Manifest, Resume, RunConfig


def build_manifest(
    question_sets: list[QuestionSet],
    config: RunConfig,
    tool_manifests: dict[str, str],
    prompt_digest: str,
    replicas: dict[str, Any],
    sandbox_isolation: str,
) -> Manifest:
    """`tool_manifests` maps "<arm>/<domain>" to that arm's tool manifest hash; `replicas` maps
    each domain to its endpoint (base_url)."""
    return Manifest(
        created=now(),
        model=config.model,
        config=config.manifest_config(),
        git_commit=git_commit(),
        question_sets={qs.key: qs.content_hash() for qs in question_sets},
        tool_manifests=tool_manifests,
        replicas={domain: target.base_url for domain, target in replicas.items()},
        data_hash=data_hash(qs.domain for qs in question_sets),
        prompt_hash=prompt_digest,
        versions={"python": platform.python_version(), "litellm": version("litellm")},
        sandbox_isolation=sandbox_isolation,
    )


def resume_differences(stored: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Why the current command may not continue the stored run set: one line per difference.

    Both are manifests as JSON (`current` as it would be written), so a tuple in memory and
    the list it was stored as compare equal."""
    problems = []
    if stored.get("model") != current["model"]:
        problems.append(f"model: the run set used {stored.get('model')!r}, this command {current['model']!r}")
    runs_then, runs_now = stored.get("config", {}).get("runs"), current["config"]["runs"]
    if runs_then != runs_now:
        problems.append(f"--runs: the run set has {runs_then} per question, this command {runs_now}")
    then, now = stored.get("config", {}), current["config"]
    only_then, only_now = sorted(then.get("questions", [])), sorted(now.get("questions", []))
    if only_then != only_now:
        problems.append(f"--question: the run set ran {', '.join(only_then) or 'every question'}, "
                        f"this command {', '.join(only_now) or 'every question'}")
    if bool(then.get("record")) != bool(now.get("record")):
        problems.append("--record: the run set was " + ("" if then.get("record") else "not ")
                        + "recorded; give the same --record")
    if then.get("price_per_million") != now.get("price_per_million"):
        problems.append(f"--price: the run set used {then.get('price_per_million')}, "
                        f"this command {now.get('price_per_million')}")
    problems += _hash_differences("question set", stored.get("question_sets", {}), current["question_sets"])
    problems += _hash_differences("tool manifest", stored.get("tool_manifests", {}), current["tool_manifests"])
    if stored.get("data_hash") != current["data_hash"]:
        problems.append(f"replica data: hash {_short(stored.get('data_hash'))} in the run set, "
                        f"{_short(current['data_hash'])} now")
    if stored.get("prompt_hash") != current["prompt_hash"]:
        problems.append("system prompt: it differs from the run set's (was --budget changed?)")
    return problems


def _hash_differences(what: str, stored: dict[str, str], current: dict[str, str]) -> list[str]:
    if stored.keys() != current.keys():
        return [f"{what}s: the run set has {', '.join(sorted(stored)) or 'none'}; "
                f"this command {', '.join(sorted(current))}"]
    return [
        f"{what} {key}: hash {_short(stored[key])} in the run set, {_short(current[key])} now"
        for key in sorted(stored)
        if stored[key] != current[key]
    ]


def record_resume(stored: dict[str, Any], config: RunConfig, directory: Path) -> Manifest:
    """The stored manifest with this resume appended to its history."""
    try:
        manifest = Manifest.model_validate(stored)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, issue['loc']))}: {issue['msg']}" for issue in error.errors())
        raise UserError(f"cannot resume {directory}: its manifest.json is not one this armbench "
                        f"writes ({problems})") from None
    entry = Resume(at=now(), git_commit=git_commit(), config=config.manifest_config())
    return manifest.model_copy(update={"resumes": [*manifest.resumes, entry]})


def _short(value: str | None) -> str:
    return (value or "none")[:12]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()
