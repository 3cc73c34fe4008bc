"""The local model's speed, and what each arm costs it in tokens on the GPU held-out set.

    python benchmarks/local_model.py RECORDED_RUN_SET

- Prompt and generation tokens/s, measured now on this machine: a 2,048-token prompt (the start of
  a recorded tooled-arm request, in the model's chat format) evaluated once, then 64 tokens
  generated one by one. Needs `make local-model`; without it this part says so and is left out.
- Tooled/browsing token ratio per run, from the recorded run set (its held-out GPU runs): tokens
  are prompt + completion over the whole run, as LiteLLM counted them.
- From the whole recording: the share of runs with at least one schema-valid tool call (a call
  whose result is not an unknown-tool, bad-JSON or schema error), correct runs, median actions per
  arm, and the tooled/browsing ratios of mean tokens and median wall time.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from figures import record

from armbench.engine.store import open_run_set

PROMPT_TOKENS = 2048
GENERATED_TOKENS = 64
CALL_ERRORS = {"unknown_tool", "invalid_json", "invalid_arguments"}  # the call itself was malformed


def chat_text(step: dict) -> str:
    """The recorded request as ChatML text (Qwen's format), tools in the system turn as Qwen puts them."""
    tools = "\n".join(json.dumps(schema) for schema in step.get("tool_schemas", []))
    turns = [f"<|im_start|>{m['role']}\n{m.get('content') or ''}<|im_end|>" for m in step["sent"]]
    return f"<|im_start|>system\n# Tools\n<tools>\n{tools}\n</tools><|im_end|>\n" + "\n".join(turns)


def measure_speed(run_set: Path) -> dict[str, float] | None:
    from armbench.models.local_models import LOCAL_MODELS, load

    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return None
    spec = LOCAL_MODELS["qwen2.5-coder-0.5b"]
    if not spec.path.exists():
        return None
    first_step = next((run_set / "recording").glob("*tooled*.jsonl")).read_text().splitlines()[0]
    model = load(spec)
    tokens = model.tokenize(chat_text(json.loads(first_step)).encode())[:PROMPT_TOKENS]
    model.reset()
    started = time.perf_counter()
    model.eval(tokens)
    prompt_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(GENERATED_TOKENS):
        model.eval([model.sample(top_k=1)])
    generation_seconds = time.perf_counter() - started
    return {"prompt_tps": len(tokens) / prompt_seconds, "generation_tps": GENERATED_TOKENS / generation_seconds,
            "prompt_tokens": len(tokens)}


def token_ratios(run_set: Path) -> list[tuple[str, int, int]]:
    """(question, browsing tokens, tooled tokens) for each held-out GPU question run in both arms."""
    tokens: dict[tuple[str, int], dict[str, int]] = {}
    for r in open_run_set(run_set).records():
        if r.domain == "gpus" and r.set == "heldout":
            tokens.setdefault((r.question_id, r.repeat), {})[r.arm] = r.prompt_tokens + r.completion_tokens
    return [(f"{q}.r{repeat}", arms["browsing"], arms["tooled"])
            for (q, repeat), arms in sorted(tokens.items()) if {"browsing", "tooled"} <= arms.keys()]


def valid_calls(transcript: Path) -> int:
    """Tool results in a transcript that are not a malformed-call error."""
    count = 0
    for line in transcript.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if message.get("role") != "tool":
            continue
        try:
            result = json.loads(message.get("content") or "{}")
        except json.JSONDecodeError:
            result = {}
        error = result.get("error") if isinstance(result, dict) else None
        count += not (isinstance(error, dict) and error.get("type") in CALL_ERRORS)
    return count


def recording_summary(run_set: Path) -> list[str]:
    records = open_run_set(run_set).records()
    with_call = [r for r in records if valid_calls(run_set / r.transcript_path) > 0]
    lines = [f"runs with >= 1 schema-valid tool call: {len(with_call)}/{len(records)} "
             f"({len(with_call) / max(len(records), 1):.0%})"]
    arms = {arm: [r for r in records if r.arm == arm] for arm in ("browsing", "tooled")}
    for arm, runs in arms.items():
        if runs:
            lines.append(f"{arm}: {sum(bool(r.correct) for r in runs)}/{len(runs)} correct, median actions "
                         f"{statistics.median(r.actions for r in runs):g}")
    if all(arms.values()):
        tokens = {arm: statistics.mean(r.prompt_tokens + r.completion_tokens for r in runs) for arm, runs in arms.items()}
        wall = {arm: statistics.median(r.wall_seconds for r in runs) for arm, runs in arms.items()}
        lines.append(f"tooled/browsing: mean tokens {tokens['tooled'] / tokens['browsing']:.2f}, "
                     f"median wall time {wall['tooled'] / wall['browsing']:.2f}")
    return lines


def main() -> None:
    run_set = Path(sys.argv[1])
    if not (run_set / "recording").is_dir():
        sys.exit(f"{run_set} holds no recording: record one first (docs/nightly.md: record, replay and the regression gate)")
    speed = measure_speed(run_set)
    if speed is None:
        print("local model: not installed (run `make local-model`); speed not measured")
    else:
        print(f"local model qwen2.5-coder-0.5b: prompt {speed['prompt_tps']:.0f} tokens/s "
              f"({speed['prompt_tokens']} tokens), generation {speed['generation_tps']:.1f} tokens/s "
              f"({GENERATED_TOKENS} tokens)")
        record("local model, prompt", speed["prompt_tps"], "tokens/s")
        record("local model, generation", speed["generation_tps"], "tokens/s")
    ratios = token_ratios(run_set)
    print(f"tooled/browsing tokens per run, GPU held-out set, from {run_set}:")
    for run, browsing, tooled in ratios:
        print(f"  {run}: browsing {browsing:,}, tooled {tooled:,}, ratio {tooled / browsing:.2f}")
    if ratios:
        print(f"  median ratio {statistics.median(t / b for _, b, t in ratios):.2f} over {len(ratios)} runs")
    print(f"the recording {run_set}, every run:")
    for line in recording_summary(run_set):
        print(f"  {line}")


if __name__ == "__main__":
    main()
