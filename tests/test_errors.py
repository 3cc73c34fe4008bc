"""One-line error messages (armbench/errors.py: `first_line`), as the CLI, the browser tools and
the Ray executor show a library's error."""
from __future__ import annotations

from armbench.errors import first_line


class LibraryError(Exception):
    """An error that keeps its own words apart from its wrapping, as Playwright's does."""

    def __init__(self, message: str):
        super().__init__(f"LibraryError: {message}\nCall log: ...")
        self.message = message


class TaskError(Exception):
    """A remote task's error, wrapping the one its worker raised, as Ray's does."""

    def __init__(self, cause: BaseException):
        super().__init__(f"task failed\n{cause}")
        self.cause = cause


def test_an_errors_first_line_is_its_own_words_or_else_its_type():
    assert first_line(ValueError("  bad value\nmore detail")) == "bad value"
    assert first_line(LibraryError("net::ERR_CONNECTION_REFUSED at http://x/\n")) == (
        "net::ERR_CONNECTION_REFUSED at http://x/")
    assert first_line(TaskError(OSError("no space left on device"))) == "no space left on device"
    assert first_line(TimeoutError()) == "TimeoutError"
