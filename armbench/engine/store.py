"""The results layout of one run set: where its manifest, records and transcripts are kept.

    <run-set>/manifest.json   what was run: config, model, commit, hashes
    <run-set>/runs.jsonl      one RunRecord per finished run, appended and flushed as it finishes
    <run-set>/runs.parquet    the same rows for analysis, written when the set ends
    <run-set>/transcripts/    one JSONL per run: the messages exchanged
    <run-set>/recording/      with --record: one JSONL per run, every model call (armbench/models/recording.py)
    <run-set>/runs.jsonl.bad  the corrupt lines a resume set aside (their runs were redone)
    <run-set>/runs.jsonl.retried  records of runs the harness broke, set aside by a resume that redid them
    <run-set>/writer.lock     the one writer's lock (an flock) and pid: see `RunSetStore.writing`

Appending one line per finished run (one `write` of the whole line, then fsync) means a crash,
a Ctrl-C or a `kill -9` loses at most the runs in flight; `bench run --resume` redoes those.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from armbench.errors import UserError, read_bytes, read_json_object
from armbench.types import Manifest, RunRecord

_HELD_HERE: set[Path] = set()  # run set folders whose writer lock this process holds


def lock_holder(fd: int) -> str:
    """The pid a writer lock file names: its holder writes it just after taking the lock, so an
    empty file is read again for a moment."""
    for _ in range(20):
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if pid:
            return pid
        time.sleep(0.025)
    return "unknown"


@dataclass(frozen=True)
class Reopened:
    """What a resume set aside of a stopped run set's lines (see RunSetStore.reopen)."""

    corrupt: int  # lines that are not run records, moved to runs.jsonl.bad
    retried: int  # records of runs the harness broke, moved to runs.jsonl.retried: they run again
    duplicates: int  # earlier records of runs recorded twice, dropped


class RunSetStore:
    def __init__(self, directory: Path):
        self.directory = directory
        self.runs_path = directory / "runs.jsonl"
        self.manifest_path = directory / "manifest.json"
        self.transcripts_dir = directory / "transcripts"
        self.bad_path = directory / "runs.jsonl.bad"
        self.retried_path = directory / "runs.jsonl.retried"
        self.lock_path = directory / "writer.lock"

    def check_new(self) -> None:
        """Refuse (UserError) a place that cannot take a new run set: one holding a run set already, a
        file, or where nothing can be written. Nothing is made: `bench run` checks before it starts."""
        if self.manifest_path.exists() or self.runs_path.exists():
            raise UserError(
                f"{self.directory} already holds a run set; choose another --out, or continue it "
                f"with --resume {self.directory}"
            )
        nearest = next(path for path in (self.directory, *self.directory.parents) if path.exists())
        cannot = f"cannot make a run set at {self.directory}: {nearest}"
        if not nearest.is_dir():
            raise UserError(f"{cannot} is a file, not a folder; choose another --out")
        problem = unwritable(nearest)
        if problem:
            raise UserError(f"{cannot} takes no files ({problem}); choose another --out")

    def check_resumable(self) -> None:
        """Refuse (UserError) a run set that cannot take more records, before anything starts."""
        problem = unwritable(self.directory)
        if problem is None:
            try:
                with self.runs_path.open("ab"):
                    pass
            except OSError as error:
                problem = error.strerror
        if problem:
            raise UserError(f"cannot resume {self.directory}: it takes no more records ({problem})")
        self.check_no_writer()

    def create(self, manifest: Manifest) -> None:
        self.check_new()
        self.transcripts_dir.mkdir(parents=True, exist_ok=True)
        self.write_manifest(manifest)
        self.runs_path.touch()

    def reopen(self) -> Reopened:
        """Prepare a stopped run set for more runs, so it ends with one record per run: drop a torn
        last line (a crash mid-write), move each other line that is not a run record to
        runs.jsonl.bad (kept for a look while its run is redone), keep only the last record of a run
        recorded twice, and move the records of runs the harness broke (`retryable`) to
        runs.jsonl.retried, so those runs are run again."""
        self.transcripts_dir.mkdir(parents=True, exist_ok=True)
        data = read_bytes(self.runs_path, "the run set's records")
        complete = data[: data.rfind(b"\n") + 1]
        lines = self._parse(complete)
        corrupt = [raw for _number, raw, parsed in lines if not isinstance(parsed, RunRecord)]
        last: dict[str, tuple[bytes, RunRecord]] = {}
        for _number, raw, parsed in lines:
            if isinstance(parsed, RunRecord):
                last.pop(parsed.run_id, None)  # kept where its last record is
                last[parsed.run_id] = (raw, parsed)
        retried = [raw for raw, record in last.values() if record.retryable]
        reopened = Reopened(len(corrupt), len(retried), len(lines) - len(corrupt) - len(last))
        if corrupt or retried or reopened.duplicates:
            for path, moved in ((self.bad_path, corrupt), (self.retried_path, retried)):
                if moved:
                    with path.open("ab") as aside:
                        aside.write(b"".join(raw + b"\n" for raw in moved))
                        os.fsync(aside.fileno())
            self._replace_runs(b"".join(raw + b"\n" for raw, record in last.values() if not record.retryable))
        elif len(complete) != len(data):
            with self.runs_path.open("r+b") as handle:
                handle.truncate(len(complete))
                os.fsync(handle.fileno())
        return reopened

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the run set's one-writer lock while records are added: an flock, which the kernel
        drops when the process dies (kill -9 included), so a lock is never stale. Another process
        is refused at once, naming the holder; this process may take it again (`bench run` takes it
        before the provider's preflight, the runner once more); readers never take it."""
        key = self.directory.resolve()
        if key in _HELD_HERE:
            yield
            return
        made = not self.directory.exists()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise UserError(f"cannot write the run set {self.directory}: {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(fd)
            os.close(fd)
            raise UserError(f"{self.directory} is being written by another `bench run` (pid {holder}); "
                            "wait for it to end, or stop it and --resume") from None
        _HELD_HERE.add(key)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            _HELD_HERE.discard(key)
            if made and os.listdir(self.directory) == [self.lock_path.name]:  # a set that never started
                self.lock_path.unlink()
                self.directory.rmdir()
            os.close(fd)  # releases the lock

    def retried_cost(self) -> float:
        """Dollars the runs set aside in runs.jsonl.retried cost: spent, though their runs are run again."""
        if not self.retried_path.exists():
            return 0.0
        spent = 0.0
        for number, line in enumerate(read_bytes(self.retried_path, "the run set's records").splitlines(), start=1):
            try:
                spent += RunRecord.model_validate_json(line).cost_usd or 0.0
            except ValidationError as error:
                raise UserError(f"{self.retried_path}:{number} is not a run record ({describe(error.errors()[:1])})"
                                ) from None
        return spent

    def check_no_writer(self) -> None:
        """Refuse (UserError) now, before anything starts, a run set another process is writing."""
        if self.lock_path.exists():
            with self.writing():
                pass

    def _replace_runs(self, data: bytes) -> None:
        """runs.jsonl replaced by `data` at once: a crash leaves the old file or the new, never half."""
        staging = self.runs_path.with_suffix(".jsonl.tmp")
        with staging.open("wb") as handle:
            handle.write(data)
            os.fsync(handle.fileno())
        os.replace(staging, self.runs_path)
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def write_manifest(self, manifest: Manifest) -> None:
        staging = self.manifest_path.with_suffix(".json.tmp")
        staging.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
        os.replace(staging, self.manifest_path)

    def write_transcript(self, run_id: str, messages: list[dict[str, Any]]) -> str:
        path = self.directory / self.transcript_path(run_id)
        write_transcript(path, messages)
        return str(path.relative_to(self.directory))

    def transcript_path(self, run_id: str) -> str:
        """Where a run's transcript is, as its record says: relative to the run set."""
        return str((self.transcripts_dir / f"{run_id}.jsonl").relative_to(self.directory))

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
        """The manifest as written, read leniently so run sets of any age open for reports: a key may
        be missing, but the file must be a JSON object whose keys have their types (else a UserError)."""
        stored = read_json_object(self.manifest_path, "the run set's manifest")
        try:
            Manifest.model_validate(stored)
        except ValidationError as error:
            wrong = [issue for issue in error.errors() if issue["type"] != "missing"]
            if wrong:
                raise UserError(f"the run set's manifest {self.manifest_path} is not one armbench writes "
                                f"({describe(wrong)})") from None
        return stored

    def records(self) -> list[RunRecord]:
        """Every complete line of runs.jsonl, one record per run. A torn last line (a crash mid-write:
        no newline yet) is skipped; any other line that is not a run record of this run set is an
        error, never a silently lost run. A run recorded twice keeps its last record (said once)."""
        if not self.runs_path.exists():
            return []
        latest: dict[str, RunRecord] = {}
        lines = 0
        for number, _raw, parsed in self._parse(read_bytes(self.runs_path, "the run set's records")):
            if not isinstance(parsed, RunRecord):
                raise UserError(f"{self.runs_path}:{number} is not a run record ({parsed}); resuming the "
                                f"set (its `bench run` command with --resume {self.directory}) sets such lines aside")
            latest.pop(parsed.run_id, None)  # kept where its last record is
            latest[parsed.run_id] = parsed
            lines += 1
        if lines > len(latest):
            tell_duplicates(self.runs_path, lines - len(latest))
        return list(latest.values())

    def records_to_report(self) -> list[RunRecord]:
        """Every record, for a report, a comparison or the regression gate: a run set without one is a
        UserError, never empty tables or a gate passed for want of runs."""
        records = self.records()
        if not records:
            raise UserError(f"no runs in {self.directory} (its runs.jsonl holds no run record)")
        return records

    def _parse(self, data: bytes) -> list[tuple[int, bytes, RunRecord | str]]:
        """Each complete line of runs.jsonl (a torn last one left out): its number, its bytes, and
        its record or why it is not one. Read strictly, as a hand edit would otherwise slip through
        ("yes" is no boolean, NaN no cost), and against the arms and question sets the manifest names."""
        names = RunSetNames.of(self.manifest() if self.manifest_path.exists() else {})
        *complete, _torn = data.split(b"\n")
        lines: list[tuple[int, bytes, RunRecord | str]] = []
        for number, raw in enumerate(complete, start=1):
            try:
                record = RunRecord.model_validate_json(raw.decode("utf-8"), strict=True)
                parsed: RunRecord | str = names.stranger(record) or record
            except UnicodeDecodeError as error:
                parsed = f"not UTF-8 text at byte {error.start}"
            except ValidationError as error:
                parsed = describe(error.errors()[:1]).removeprefix(": ")
            lines.append((number, raw, parsed))
        return lines


@dataclass(frozen=True)
class RunSetNames:
    """The arms and question sets ("<domain>/<set>") a run set's manifest names, which its records
    must use; None where the manifest names none (a run set without one, or from before the key)."""

    arms: frozenset[str] | None
    question_sets: frozenset[str] | None

    @classmethod
    def of(cls, manifest: dict[str, Any]) -> RunSetNames:
        arms, question_sets = (manifest.get("config") or {}).get("arms"), manifest.get("question_sets")
        return cls(frozenset(map(str, arms)) if isinstance(arms, list) else None,
                   frozenset(question_sets) if isinstance(question_sets, dict) else None)

    def stranger(self, record: RunRecord) -> str | None:
        """Why `record` is not one of this run set's runs, if it is not."""
        if self.arms is not None and record.arm not in self.arms:
            return f"arm: {record.arm!r} is not an arm of this run set ({', '.join(sorted(self.arms))})"
        key = f"{record.domain}/{record.set}"
        if self.question_sets is not None and key not in self.question_sets:
            return (f"domain/set: {key!r} is not a question set of this run set "
                    f"({', '.join(sorted(self.question_sets)) or 'none'})")
        return None


_TOLD_DUPLICATES: set[Path] = set()  # runs.jsonl files whose repeated runs were reported already


def tell_duplicates(runs_path: Path, repeated: int) -> None:
    """One warning per file and process, however often it is read."""
    if runs_path.resolve() in _TOLD_DUPLICATES:
        return
    _TOLD_DUPLICATES.add(runs_path.resolve())
    print(f"warning: {runs_path} records {repeated} run(s) more than once; the last record of each is used",
          file=sys.stderr)


def write_transcript(path: Path, messages: list[dict[str, Any]]) -> None:
    """An episode's messages, one JSON line each."""
    with path.open("w", encoding="utf-8") as handle:
        for message in messages:
            handle.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")


def unwritable(folder: Path) -> str | None:
    """Why no file can be made in `folder` (None if one can), found by making one."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        return error.strerror
    return None


def open_run_set(directory: Path) -> RunSetStore:
    store = RunSetStore(directory)
    if not store.runs_path.exists():
        raise UserError(f"{directory} is not a run set (no runs.jsonl)")
    return store


def describe(issues: list[dict[str, Any]]) -> str:
    """Pydantic's issues on one line: `loc: message; ...`."""
    return "; ".join(f"{'.'.join(map(str, issue['loc']))}: {issue['msg']}" for issue in issues)


# runs.parquet's columns, one per RunRecord field, with fixed types: a column that is null in every
# run stays typed, so any two run sets' tables concatenate. actions_by_tool is a map as Arrow
# writes one, a list of {tool, count}.
TEXT, LIST_OF_TEXT = pl.Utf8, pl.List(pl.Utf8)
RUNS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": TEXT, "question_id": TEXT, "domain": TEXT, "set": TEXT, "arm": TEXT, "repeat": pl.Int64,
    "model": TEXT, "provider": TEXT, "answer": TEXT, "correct": pl.Boolean, "outcome": TEXT,
    "miss_reason": TEXT, "stop_reason": TEXT, "error": TEXT, "error_kind": TEXT, "retryable": pl.Boolean, "cost_usd": pl.Float64,
    "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64, "actions": pl.Int64,
    "actions_by_tool": pl.List(pl.Struct({"tool": TEXT, "count": pl.Int64})), "tool_errors": pl.Int64,
    "empty_tool_args": pl.Int64, "retries": pl.Int64, "injected_faults": LIST_OF_TEXT,
    "call_providers": LIST_OF_TEXT, "wall_seconds": pl.Float64, "model_seconds": pl.Float64,
    "tool_seconds": pl.Float64, "tool_cpu_seconds": pl.Float64, "tool_queue_seconds": pl.Float64,
    "tool_limits_hit": LIST_OF_TEXT, "question_set_hash": TEXT, "tool_manifest_hash": TEXT, "data_hash": TEXT,
    "prompt_hash": TEXT, "transcript_path": TEXT, "replay_divergence": TEXT, "replayed_times": pl.Boolean,
    "synthesized_tool_hash": TEXT, "web": TEXT,
    "finished_at": TEXT,
}


def records_frame(records: list[RunRecord]) -> pl.DataFrame:
    """Every field of the records (runs.parquet), typed by RUNS_SCHEMA."""
    rows = [
        {**record.model_dump(mode="json"), "injected_faults": record.injected_faults,
         "synthesized_tool_hash": record.synthesized_tool_hash, "web": record.web,
         "tool_cpu_seconds": record.tool_cpu_seconds, "tool_queue_seconds": record.tool_queue_seconds,
         "tool_limits_hit": record.tool_limits_hit,
         "actions_by_tool": [{"tool": tool, "count": count} for tool, count in record.actions_by_tool.items()]}
        for record in records
    ]
    return pl.DataFrame(rows, schema=RUNS_SCHEMA)


def scalar_columns(records: list[RunRecord], columns: list[str]) -> pl.DataFrame:
    """Only these scalar fields, built column by column: what a summary reads of 15,000 records in a
    tenth of the time a full `records_frame` takes."""
    return pl.DataFrame({name: [getattr(record, name) for record in records] for name in columns})
