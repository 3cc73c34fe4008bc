"""Where the project's data lives, relative to the checkout (the package is installed editable).

`ARMBENCH_QUESTIONS_DIR` (or `bench --questions-dir`) points the harness at another question
bank (with its own lock file), e.g. a private held-out set, or a scratch copy in tests. It is read
when a bank is needed, not at import, so the flag can set it after armbench is imported.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS_DIR_ENV = "ARMBENCH_QUESTIONS_DIR"
QUESTIONS_DIR = ROOT / "questions"  # the project's own bank
RESULTS_DIR = ROOT / "results"
SHARED_DATA_DIR = ROOT.parent / "shared" / "data"


def questions_dir() -> Path:
    """The question bank in use: $ARMBENCH_QUESTIONS_DIR, else the project's."""
    return Path(os.environ.get(QUESTIONS_DIR_ENV) or QUESTIONS_DIR)


def lock_file() -> Path:
    return questions_dir() / "questions.lock"
