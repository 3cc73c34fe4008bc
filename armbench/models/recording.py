"""Record the model's side of a run set (`bench run --record`), one file per run:

    <run-set>/recording/<run_id>.jsonl   one line per model call of that run

A line holds `sent`, the messages the harness added since the model's previous turn (the system
prompt and question at step 0, tool results after that), a digest of the offered tools (the
schemas themselves at step 0), and the model's response (or the provider failure). The model's
own turns are not stored twice: each is the previous step's response. A model call cut short by
the run timeout is recorded as `interrupted`. `replay.py` plays a recording back.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from armbench.models.client import ModelCaller, ProviderFailure, served_by
from armbench.models.messages import assistant_message

RECORDING_DIR = "recording"


def recording_dir(run_set: Path) -> Path:
    return run_set / RECORDING_DIR


def recording_path(run_set: Path, run_id: str) -> Path:
    return recording_dir(run_set) / f"{run_id}.jsonl"


def tools_digest(tools: list[dict[str, Any]] | None) -> str:
    return hashlib.sha256(json.dumps(tools or [], sort_keys=True).encode()).hexdigest()


class Recorder:
    """A model caller for one run that passes calls through and writes each exchange down."""

    def __init__(self, inner: ModelCaller, path: Path):
        self.inner = inner
        self.path = path
        self.step = 0
        self.seen = 0  # messages the recording already holds (sent, or the model's own turns)

    async def complete(self, messages, tools, tool_choice=None):
        line: dict[str, Any] = {"step": self.step, "sent": messages[self.seen:], "tools": tools_digest(tools)}
        if self.step == 0:
            line["tool_schemas"] = tools or []
        try:
            response, retries = await self.inner.complete(messages, tools, tool_choice)
        except ProviderFailure as failure:
            line["failure"] = {"type": type(failure.error).__name__, "kind": failure.kind.name, "message": str(failure),
                               "attempts": failure.attempts}
            self._write(line)
            raise
        except asyncio.CancelledError:  # the run timeout (or Ctrl-C, whose run is redone anyway)
            self._write({**line, "interrupted": True})
            raise
        line.update(response=response_dict(response), retries=retries)
        self._write(line)
        self.step += 1
        self.seen = len(messages) + 1  # + the assistant turn the loop appends from this response
        return response, retries

    def _write(self, line: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("w" if line["step"] == 0 else "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")


def response_dict(response: Any) -> dict[str, Any]:
    """What a replay needs of a response: the message, finish reason, usage, cost and provider."""
    choice = response.choices[0]
    message = choice.message
    recorded = assistant_message(message.content, list(message.tool_calls or []))
    extra = getattr(message, "provider_specific_fields", None)
    if extra:
        recorded["provider_specific_fields"] = extra
    usage = getattr(response, "usage", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    return {
        "model": response.model,
        "message": recorded,
        "finish_reason": choice.finish_reason,
        "usage": {"prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                  "completion_tokens": getattr(usage, "completion_tokens", 0) or 0},
        "cost_usd": hidden.get("response_cost"),
        "provider": served_by(response),
    }
