"""The nightly workflow and the Makefile agree: every `make` target the workflow runs exists."""
import json
import re

import yaml

from armbench.paths import ROOT


def test_the_workflow_runs_make_targets_that_exist_and_uploads_the_reports():
    workflow = yaml.safe_load((ROOT / ".github/workflows/nightly.yml").read_text())
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, flags=re.MULTILINE))
    steps = workflow["jobs"]["nightly"]["steps"]
    called = [m for step in steps for m in re.findall(r"\bmake ([\w-]+)", step.get("run", ""))]
    assert called == ["nightly", "test-local", "nightly-live"]
    assert set(called) <= targets
    assert workflow[True]["schedule"]  # YAML 1.1 reads the key `on` as True
    assert any(step.get("uses", "").startswith("actions/upload-artifact") for step in steps)


def test_the_recording_the_makefile_replays_is_committed_with_every_run():
    makefile = (ROOT / "Makefile").read_text()
    recording = ROOT / re.search(r"^RECORDING := (\S+)", makefile, flags=re.MULTILINE).group(1)
    runs = (recording / "runs.jsonl").read_text().splitlines()
    assert len(runs) == 20  # 10 GPU questions x 2 arms
    assert sorted(p.stem for p in (recording / "recording").glob("*.jsonl")) == sorted(
        json.loads(line)["run_id"] for line in runs)
