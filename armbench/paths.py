"""Where the project's data lives: relative to the checkout (installed editable), or inside the
package when installed from a wheel.

`ARMBENCH_QUESTIONS_DIR` (or `bench --questions-dir`) points the harness at another question
bank (with its own lock file), e.g. a private held-out set, or a scratch copy in tests. It is read
when a bank is needed, not at import, so the flag can set it after armbench is imported.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run from the project's checkout, or installed from a wheel (site-packages has no pyproject.toml):
# the wheel carries the bank as armbench/question_bank (in the checkout, a link to questions/),
# and writes results under the folder `bench` runs in, not into site-packages.
CHECKOUT = (ROOT / "pyproject.toml").is_file()
QUESTIONS_DIR_ENV = "ARMBENCH_QUESTIONS_DIR"
QUESTIONS_DIR = ROOT / "questions" if CHECKOUT else Path(__file__).resolve().parent / "question_bank"
RESULTS_DIR = ROOT / "results" if CHECKOUT else Path("results")
SHARED_DATA_DIR = ROOT.parent / "shared" / "data"


def questions_dir() -> Path:
    """The question bank in use: $ARMBENCH_QUESTIONS_DIR, else the project's."""
    return Path(os.environ.get(QUESTIONS_DIR_ENV) or QUESTIONS_DIR)


def lock_file() -> Path:
    return questions_dir() / "questions.lock"
