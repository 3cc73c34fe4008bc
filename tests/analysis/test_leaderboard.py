"""`bench report A B C`: three models' run sets ranked on the questions all three ran."""
import base64
import csv
import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from armbench.analysis.leaderboard import RunSet, labels, leaderboard
from armbench.engine.store import RunSetStore
from tests.support.run_sets import make_manifest, make_record

PNG = b"\x89PNG\r\n\x1a\n"
SHARED = ["q1", "q2", "q3", "q4"]

# model -> arm -> (questions answered right, cost per run); every run a graded one unless listed below
SCRIPT = {
    "alpha": {"tooled": ({"q1", "q2", "q3", "q4"}, 0.006), "browsing": ({"q1", "q2"}, 0.01)},
    "beta": {"tooled": ({"q1", "q2", "q3"}, 0.002), "browsing": ({"q1"}, 0.004)},
    "gamma": {"tooled": ({"q1", "q2"}, 0.003), "browsing": (set(), 0.001)},
}
EXTRA = {"beta": [("gpus", "design", "q5")], "gamma": [("gpus", "heldout", "h1")]}  # not shared: left out


def write_run_set(directory, model: str) -> RunSetStore:
    store = RunSetStore(directory)
    store.create(make_manifest(model=model))
    for arm, (right, cost) in SCRIPT[model].items():
        groups = [("gpus", "design", q) for q in SHARED] + EXTRA.get(model, [])
        for domain, set_name, question in groups:
            run = dict(correct=question in right, outcome="fully_correct" if question in right else "fully_incorrect")
            if model == "gamma" and arm == "tooled" and question == "q4":
                run = dict(correct=None, outcome=None, stop_reason="infra_error", error="429", error_kind="infra")
            store.append(make_record(question_id=question, domain=domain, set=set_name, arm=arm, model=model,
                                     cost_usd=cost, wall_seconds=2.0, actions=3, **run))
    return store


@pytest.fixture
def runs_dir():
    """A short folder for the run sets: the leaderboard prints their paths, which must fit its rows
    whatever pytest's own tmp_path is (longer under pytest-xdist)."""
    folder = Path(tempfile.mkdtemp(prefix="lb-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def three_models(runs_dir) -> list[str]:
    return [str(write_run_set(runs_dir / model, model).directory) for model in SCRIPT]


def test_the_leaderboard_ranks_rows_by_accuracy_on_shared_questions(cli, three_models, runs_dir, tmp_path):
    code, out, err = cli("report", *three_models, "--out", str(tmp_path / "plots"))
    assert code == 0, err
    lines = out.splitlines()
    ranked = [next(i for i, line in enumerate(lines) if f"│ {model:<6}" in line and f" {arm} " in line)
              for model, arm in [("alpha", "tooled"), ("beta", "tooled"), ("gamma", "tooled"),
                                 ("alpha", "browsing"), ("beta", "browsing"), ("gamma", "browsing")]]
    assert ranked == sorted(ranked)
    row = {model_arm: lines[i] for model_arm, i in zip(["at", "bt", "gt", "ab", "bb", "gb"], ranked)}
    for key, needles in {
        "at": ["4/4", "100%", "51%–100%", "$0.0060", "1,100"],
        "bt": ["3/4", "75%", "$0.0027", "1,467"],
        "gt": ["2/3", "67%", "$0.0045", "1,650", "│            1 │"],
        "ab": ["2/4", "50%", "$0.0200"],
        "gb": ["0/4", "0%", "0%–49%"],
    }.items():
        for needle in needles:
            assert needle in row[key], (key, needle, row[key])
    assert "Over the 4 domain/set/question group(s)" in out.replace("\n", " ")
    for model, left_out, gap in [("alpha", 0, "+50 pp"), ("beta", 2, "+50 pp"), ("gamma", 2, "+67 pp")]:
        [line] = [line for line in lines if f"{runs_dir / model}" in line and "│" in line]
        assert f"│ 8 │ {left_out} │ {gap} │" in " ".join(line.split()), line
    png = tmp_path / "plots" / "leaderboard.png"
    assert png.read_bytes().startswith(PNG) and str(png) in err
    page = (tmp_path / "plots" / "leaderboard.html").read_text()
    assert base64.b64encode(png.read_bytes()).decode() in page  # the same plot, inline
    assert page.count("<tr>") >= 1 + 6 and "51%–100%" in page and str(runs_dir / "gamma") in page


def test_json_has_the_same_figures_and_writes_nothing(cli, three_models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli("report", *three_models, "--json")
    assert code == 0 and not (tmp_path / "leaderboard.png").exists()
    data = json.loads(out)
    assert data["shared_groups"] == 4
    assert [(r["label"], r["runs"], r["left_out"]) for r in data["run_sets"]] == [
        ("alpha", 8, 0), ("beta", 8, 2), ("gamma", 8, 2)]
    assert [r["gap"] for r in data["run_sets"]] == pytest.approx([0.5, 0.5, 2 / 3])
    entries = {(e["run_set"], e["arm"]): e for e in data["entries"]}
    assert list(entries)[:3] == [("alpha", "tooled"), ("beta", "tooled"), ("gamma", "tooled")]
    gamma = entries[("gamma", "tooled")]
    assert (gamma["figures"]["correct"], gamma["figures"]["graded"], gamma["infra_errors"]) == (2, 3, 1)
    assert gamma["figures"]["cost_per_correct_usd"] == pytest.approx(0.0045)
    assert entries[("alpha", "tooled")]["figures"]["ci_low"] == pytest.approx(0.5101, abs=1e-4)
    assert entries[("gamma", "browsing")]["figures"]["cost_per_correct_usd"] is None


@pytest.mark.parametrize("table_format,needles", [
    ("markdown", ["## Leaderboard", "| alpha | tooled | 4/4 | 100% | 51%–100% |", "/beta | 8 | 2 | +50 pp |"]),
    ("latex", [r"\begin{tabular}{llrrrrrrrr}", r"\toprule", r"alpha & tooled & 4/4 & 100\% & 51\%–100\%",
               r"\caption{Run sets: tooled minus browsing}"]),
    ("csv", ["run set,arm,correct,accuracy,95% CI", "alpha,tooled,4/4,100%,51%–100%,$0.0060"]),
])
def test_each_format_renders_the_leaderboard(cli, three_models, tmp_path, monkeypatch, table_format, needles):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("report", *three_models, "--format", table_format)
    assert code == 0, err
    for needle in needles:
        assert needle in out, needle
    assert "note:" not in out and (tmp_path / "leaderboard.png").read_bytes().startswith(PNG)
    if table_format == "csv":
        leaderboard = out.split("\n\n")[0]
        assert len(list(csv.reader(io.StringIO(leaderboard)))) == 1 + 6


def test_shared_models_are_told_apart_by_folder(tmp_path):
    folders = [tmp_path / "a" / "x", tmp_path / "b" / "x", tmp_path / "c"]
    run_sets = [RunSet(folder, {"model": model}, []) for folder, model in zip(folders, ["m", "m", "m"])]
    assert labels(run_sets) == [f"m ({folders[0]})", f"m ({folders[1]})", "m (c)"]
    assert labels([RunSet(tmp_path, {"model": "m"}, []), RunSet(tmp_path / "y", {"model": "n"}, [])]) == ["m", "n"]


def test_run_sets_that_met_other_web_profiles_are_labelled_so_and_ranked_within_their_profile(runs_dir):
    """beta under `real` ranks after alpha and gamma under the kind web, though its accuracy lies
    between theirs; each label names its profile."""
    run_sets = []
    for model in SCRIPT:
        store = write_run_set(runs_dir / model, model)
        manifest = json.loads(store.manifest_path.read_text())
        if model == "beta":
            manifest["config"]["web"] = {"name": "real", "consent": True}
        run_sets.append(RunSet(store.directory, manifest, store.records()))
    board = leaderboard(run_sets)
    assert [(entry.run_set, entry.arm) for entry in board.entries] == [
        ("alpha · web kind", "tooled"), ("gamma · web kind", "tooled"), ("alpha · web kind", "browsing"),
        ("gamma · web kind", "browsing"), ("beta · web real", "tooled"), ("beta · web real", "browsing")]
    assert [r.web for r in board.run_sets] == ["kind", "real", "kind"]
    assert labels(run_sets[:1] + run_sets[2:]) == ["alpha", "gamma"]  # one profile: not named
