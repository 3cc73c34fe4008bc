"""User-facing errors: the CLI prints their message and exits 2, never a traceback.

The readers here are for files a person may have edited, damaged or mistaken for another (a
manifest, a lock file): each failure is a UserError naming the file.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class UserError(Exception):
    """Bad input from the person running armbench (a flag, a file, a missing key)."""


def first_line(error: BaseException) -> str:
    """What an error says first, for a one-line message: a library's own words (Playwright's
    `message`, the error a Ray task raised: its `cause`), or the error's type when it says nothing."""
    said = getattr(error, "cause", None) or error
    return (str(getattr(said, "message", said)).strip().splitlines() or [type(said).__name__])[0]


def read_bytes(path: Path, what: str) -> bytes:
    """The file's bytes; `what` names it in the error (a folder, no permission), e.g. "question file"."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise UserError(f"cannot read {what} {path}: {error.strerror}") from None


def read_text(path: Path, what: str) -> str:
    """The file's UTF-8 text; `what` names it in the error, e.g. "question file"."""
    try:
        return read_bytes(path, what).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{what} {path} is not UTF-8 text at byte {error.start}") from None


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object the file holds; anything else (not JSON, `[]`, `null`) is a UserError."""
    try:
        data = json.loads(read_text(path, what))
    except (ValueError, RecursionError) as error:  # JSONDecodeError; a 5,000-digit number; [[[[...
        raise UserError(f"{what} {path} is not valid JSON ({str(error)[:200]})") from None
    if not isinstance(data, dict):
        raise UserError(f"{what} {path} holds {json.dumps(data)[:40]}, not a JSON object")
    return data
