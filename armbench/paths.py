"""Where the project's data lives, relative to the checkout (the package is installed editable).

`ARMBENCH_QUESTIONS_DIR` points the harness at another question bank (with its own lock file),
e.g. a private held-out set, or a scratch copy in tests.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS_DIR_ENV = "ARMBENCH_QUESTIONS_DIR"
QUESTIONS_DIR = Path(os.environ.get(QUESTIONS_DIR_ENV) or ROOT / "questions")
LOCK_FILE = QUESTIONS_DIR / "questions.lock"
RESULTS_DIR = ROOT / "results"
SHARED_DATA_DIR = ROOT.parent / "shared" / "data"
