"""Where the project's data lives, relative to the checkout (the package is installed editable)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS_DIR = ROOT / "questions"
LOCK_FILE = QUESTIONS_DIR / "questions.lock"
REPLICA_DATA_DIR = ROOT / "replicas" / "data"
RESULTS_DIR = ROOT / "results"
SHARED_DATA_DIR = ROOT.parent / "shared" / "data"
