"""The run set's manifest: what was run, with which code, questions, tools, data and prompt.

It is also what `--resume` checks: a run set is only continued by the same model over the same
plan — same question sets, arms, repeats, budget, data, tool manifests and system prompt — so that
every record in it measures the same thing. Engine settings (concurrency, limits, retries) may
change. The plan is checked against the stored manifest before anything starts; only the tool
manifests and the prompt, which name the live replicas, wait for the environment.
"""
from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Iterable
from importlib.metadata import version
from typing import Any

from pydantic import ValidationError

from armbench.arms.frozen_tool import load_frozen_tools
from armbench.domains import data_hash
from armbench.engine.store import RunSetStore, describe
from armbench.errors import UserError
from armbench.provenance import git_commit
from armbench.questions import QuestionSet, tool_drift
from armbench.types import Manifest, Resume, RunConfig
from armbench.web_profile import profile_in, profiles_apart


def build_manifest(
    question_sets: list[QuestionSet],
    config: RunConfig,
    tool_manifests: dict[str, str],
    prompt_digest: str,
    replicas: dict[str, Any],
    sandbox_isolation: str,
    decoding: dict[str, Any] | None = None,
    synthesized_tools: dict[str, dict[str, str]] | None = None,
) -> Manifest:
    """`tool_manifests` maps "<arm>/<domain>" to that arm's tool manifest hash; `replicas` maps
    each domain to its endpoint (base_url); `decoding` is the model's (Model.decoding);
    `synthesized_tools` the synthesized arm's frozen tools (FrozenTool.manifest_entry) by domain."""
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
        decoding=decoding,
        synthesized_tools=synthesized_tools or {},
        heldout_tool_changed=tool_drift(question_sets),
    )


def resumable(store: RunSetStore, question_sets: list[QuestionSet], config: RunConfig) -> Manifest:
    """The stored manifest of the run set this command may continue; refused (a UserError naming
    each difference) before anything starts: no replica, browser or MCP server is needed to know."""
    if not store.manifest_path.exists() or not store.runs_path.exists():
        raise UserError(f"cannot resume {store.directory}: it is not a run set (no manifest.json or runs.jsonl)")
    stored = store.manifest()
    if stored.get("imported"):
        raise UserError(f"cannot resume {store.directory}: its runs were imported from inspect logs; "
                        "run the missing ones with inspect and import again")
    try:
        manifest = Manifest.model_validate(stored)
    except ValidationError as error:
        raise UserError(f"cannot resume {store.directory}: its manifest {store.manifest_path} is not one this "
                        f"armbench writes ({describe(error.errors())})") from None
    _refuse_differences(store, resume_differences(stored, question_sets, config))
    return manifest


def resume_differences(stored: dict[str, Any], question_sets: list[QuestionSet], config: RunConfig) -> list[str]:
    """Why this command may not continue the stored run set (its manifest as JSON, read leniently):
    one line per difference, naming the flag that differs."""
    then, now = stored.get("config", {}), config.manifest_config()  # JSON both: a tuple equals its list
    problems = []
    if stored.get("model") != config.model:
        problems.append(f"model: the run set used {stored.get('model')!r}, this command {config.model!r}")
    current = {qs.key: qs.content_hash() for qs in question_sets}
    problems += _question_set_differences(stored.get("question_sets", {}), current)
    if "arms" in then and sorted(then["arms"]) != sorted(now["arms"]):
        problems.append(f"--arm: the run set ran {', '.join(sorted(then['arms']))}, "
                        f"this command {', '.join(sorted(now['arms']))}")
    if then.get("runs") != now["runs"]:
        problems.append(f"--runs: the run set has {then.get('runs')} per question, this command {now['runs']}")
    only_then, only_now = sorted(then.get("questions", [])), sorted(now["questions"])
    if only_then != only_now:
        problems.append(f"--question: the run set ran {', '.join(only_then) or 'every question'}, "
                        f"this command {', '.join(only_now) or 'every question'}")
    if "budget" in then and then["budget"] != now["budget"]:
        problems.append(f"--budget: the run set allowed {then['budget']} tool calls per episode, "
                        f"this command {now['budget']}")
    if bool(then.get("record")) != now["record"]:
        problems.append("--record: the run set was " + ("" if then.get("record") else "not ")
                        + "recorded; give the same --record")
    if then.get("price_per_million") != now["price_per_million"]:
        problems.append(f"--price: the run set used {then.get('price_per_million')}, "
                        f"this command {now['price_per_million']}")
    if profile_in(stored) != now.get("web"):  # the kind web is in neither
        problems.append(f"--web: the run set met the web profile {profiles_apart(stored, {'config': now}, ', this command ')}")
    if then.get("completion_kwargs", {}) != now["completion_kwargs"]:
        problems.append(f"generation settings (--temperature, -M, ...): the run set used "
                        f"{then.get('completion_kwargs', {})}, this command {now['completion_kwargs']}")
    problems += _synthesized_tool_differences(stored, config)
    digest = data_hash(qs.domain for qs in question_sets)
    same_domains = _parts(stored.get("question_sets", {}), 0) == _parts(current, 0)  # else --domain says it
    if same_domains and stored.get("data_hash") != digest:
        problems.append(f"replica data: hash {_short(stored.get('data_hash'))} in the run set, {_short(digest)} now")
    return problems


def _synthesized_tool_differences(stored: dict[str, Any], config: RunConfig) -> list[str]:
    """The synthesized arm's tools (by hash) and their call timeout must be the run set's."""
    then = {domain: tool.get("sha256") for domain, tool in stored.get("synthesized_tools", {}).items()}
    if not then:
        return []
    if not config.tool_from:
        return [f"--tool-from: the run set's synthesized arm used the tool(s) of {', '.join(sorted(then))}; give "
                "the same --tool-from"]
    now = {domain: frozen.spec.sha256 for domain, frozen in load_frozen_tools(config.tool_from).items()}
    problems = [f"synthesized tool for {domain} (--tool-from): sha256 {_short(then.get(domain))} in the run set, "
                f"{_short(now.get(domain))} now" for domain in sorted(then.keys() | now.keys())
                if then.get(domain) != now.get(domain)]
    timeout = stored.get("config", {}).get("tool_timeout")
    if timeout != config.tool_timeout:
        problems.append(f"--tool-timeout: the run set allowed {timeout} s per call, this command {config.tool_timeout:g}")
    return problems


def check_environment(store: RunSetStore, stored: Manifest, current: Manifest) -> None:
    """Refuse the resume on what only the started environment knows: each arm's tools and the system
    prompt (their hashes name replicas, not addresses, so a moved port base is no difference)."""
    problems = _hash_differences("tool manifest", stored.tool_manifests, current.tool_manifests)
    if stored.decoding != current.decoding:
        problems.append("decoding: the model's reply grammar or tool-description rule differs from the run set's")
    if stored.prompt_hash != current.prompt_hash:
        problems.append("system prompt: its text differs from the run set's (made by another armbench version)")
    _refuse_differences(store, problems)


def _refuse_differences(store: RunSetStore, problems: list[str]) -> None:
    if problems:
        raise UserError(f"cannot resume {store.directory}, it differs from this command: " + "; ".join(problems))


def _question_set_differences(stored: dict[str, str], current: dict[str, str]) -> list[str]:
    """--domain or --set when they differ; else each edited set."""
    problems = []
    for flag, part in [("--domain", 0), ("--set", 1)]:
        then, now = _parts(stored, part), _parts(current, part)
        if then != now:
            problems.append(f"{flag}: the run set ran {', '.join(then) or 'none'}, this command {', '.join(now)}")
    return problems or _hash_differences("question set", stored, current)


def _parts(question_set_keys: Iterable[str], part: int) -> list[str]:
    """The domains (part 0) or set names (part 1) of "<domain>/<set>" keys."""
    return sorted({key.split("/")[part] for key in question_set_keys})


def _hash_differences(what: str, stored: dict[str, str], current: dict[str, str]) -> list[str]:
    if stored.keys() != current.keys():
        return [f"{what}s: the run set has {', '.join(sorted(stored)) or 'none'}; "
                f"this command {', '.join(sorted(current))}"]
    return [
        f"{what} {key}: hash {_short(stored[key])} in the run set, {_short(current[key])} now"
        for key in sorted(stored)
        if stored[key] != current[key]
    ]


def record_resume(stored: Manifest, config: RunConfig) -> Manifest:
    """The stored manifest with this resume appended to its history."""
    entry = Resume(at=now(), git_commit=git_commit(), config=config.manifest_config())
    return stored.model_copy(update={"resumes": [*stored.resumes, entry]})


def _short(value: str | None) -> str:
    return (value or "none")[:12]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()

