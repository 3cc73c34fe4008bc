"""The results layout of one run set: where its manifest, records and transcripts are kept.

    <run-set>/manifest.json   what was run: config, model, commit, hashes
    <run-set>/runs.jsonl      one RunRecord per finished run, appended and flushed as it finishes
    <run-set>/runs.parquet    the same rows for analysis, written when the set ends
    <run-set>/transcripts/    one JSONL per run: the messages exchanged
    <run-set>/recording/      with --record: one JSONL per run, every model call (armbench/models/recording.py)

Appending one line per finished run (one `write` of the whole line, then fsync) means a crash,
a Ctrl-C or a `kill -9` loses at most the runs in flight; `bench run --resume` redoes those.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from armbench.errors import UserError
from armbench.types import Manifest, RunRecord


class RunSetStore:
    def __init__(self, directory: Path):
        self.directory = directory
        self.runs_path = directory / "runs.jsonl"
        self.manifest_path = directory / "manifest.json"
        self.transcripts_dir = directory / "transcripts"

    def create(self, manifest: Manifest) -> None:
        if self.manifest_path.exists() or self.runs_path.exists():
            raise UserError(
                f"{self.directory} already holds a run set; choose another --out, or continue it "
                f"with --resume {self.directory}"
            )
        self.transcripts_dir.mkdir(parents=True, exist_ok=True)
        self.write_manifest(manifest)
        self.runs_path.touch()

    def reopen(self) -> None:
        """Prepare a stopped run set for more runs: drop a torn last line (a crash mid-write),
        so the next record starts on a line of its own."""
        self.transcripts_dir.mkdir(parents=True, exist_ok=True)
        data = self.runs_path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with self.runs_path.open("r+b") as handle:
                handle.truncate(len(complete))
                os.fsync(handle.fileno())

    def write_manifest(self, manifest: Manifest) -> None:
        staging = self.manifest_path.with_suffix(".json.tmp")
        staging.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
        os.replace(staging, self.manifest_path)

    def write_transcript(self, run_id: str, messages: list[dict[str, Any]]) -> str:
        path = self.transcripts_dir / f"{run_id}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for message in messages:
                handle.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
        return str(path.relative_to(self.directory))

    def append(self, record: RunRecord) -> None:
        line = (record.model_dump_json() + "\n").encode()
        fd = os.open(self.runs_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            while written < len(line):  # only on a full disk or a signal mid-write
                written += os.write(fd, line[written:])
            os.fsync(fd)
        finally:
            os.close(fd)

    def finish(self) -> Path:
        frame = records_frame(self.records())
        target = self.directory / "runs.parquet"
        frame.write_parquet(target)
        return target

    def manifest(self) -> dict[str, Any]:
        """The manifest as written, read leniently: run sets of any age open for reports."""
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def records(self) -> list[RunRecord]:
        """Every complete line of runs.jsonl. A torn last line (a crash mid-write: no newline yet) is
        skipped; any other line that is not a run record is an error, never a silently lost run."""
        if not self.runs_path.exists():
            return []
        *complete, _torn = self.runs_path.read_text(encoding="utf-8").split("\n")
        records = []
        for number, line in enumerate(complete, start=1):
            try:
                records.append(RunRecord.model_validate_json(line))
            except ValueError as error:
                problem = error.errors()[0]["msg"] if hasattr(error, "errors") else str(error)
                raise UserError(f"{self.runs_path}:{number} is not a run record ({problem})") from None
        return records


def open_run_set(directory: Path) -> RunSetStore:
    store = RunSetStore(directory)
    if not store.runs_path.exists():
        raise UserError(f"{directory} is not a run set (no runs.jsonl)")
    return store


def records_frame(records: list[RunRecord]) -> pl.DataFrame:
    """Every field of the records (runs.parquet)."""
    rows = [
        {**record.model_dump(mode="json"), "actions_by_tool": json.dumps(record.actions_by_tool)}
        for record in records
    ]
    overrides = {"actions_by_tool": pl.Utf8, "call_providers": pl.List(pl.Utf8)}
    return pl.DataFrame(rows, schema_overrides=overrides, infer_schema_length=None)


def scalar_columns(records: list[RunRecord], columns: list[str]) -> pl.DataFrame:
    """Only these scalar fields, built column by column: what a summary reads of 15,000 records in a
    tenth of the time a full `records_frame` takes."""
    return pl.DataFrame({name: [getattr(record, name) for record in records] for name in columns})
