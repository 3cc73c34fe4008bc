"""The Python API as docs/python-api.md shows it: its example is run here, as a doctest."""
from __future__ import annotations

import doctest
import re
import subprocess
import sys

import pytest

from armbench.paths import ROOT

PAGE = ROOT / "docs" / "python-api.md"


def page_example() -> str:
    return re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S).group(1)


@pytest.mark.slow
def test_the_docs_example_runs_as_written(tmp_path):
    test = doctest.DocTestParser().get_doctest(page_example(), {"run_set_folder": tmp_path / "set"},
                                               "docs: Python API", str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5
    assert (tmp_path / "set" / "runs.jsonl").exists()


@pytest.mark.slow
def test_the_api_module_example_runs_as_written(tmp_path):
    import armbench.api

    finder = doctest.DocTestFinder()
    [test] = [t for t in finder.find(armbench.api, globs={"run_set_folder": tmp_path / "api"}) if t.examples]
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries == 5


@pytest.mark.parametrize("options, message", [
    ({"concurrency": 0}, "bad run settings: concurrency: Input should be greater than or equal to 1"),
    ({"runs": 0}, "runs: Input should be greater than or equal to 1"),
    ({"max_cost": -1.0}, "max_cost: Input should be greater than 0"),
    ({"nosuch": 1}, "nosuch: Extra inputs are not permitted"),
    ({"domains": "gpus"}, "domains takes a list, e.g. domains=['gpus'] (got 'gpus' alone)"),
        ({"tool_from": "results/synth"}, "tool_from takes a list, e.g. tool_from=['results/synth']"),
    ({"completion_kwargs": {"model": "x"}}, "armbench sets model itself"),
])
def test_bad_options_are_user_errors_before_anything_runs(tmp_path, options, message):
    import armbench

    with pytest.raises(armbench.UserError, match=re.escape(message)):
        armbench.run("scripted/oracle", **{"domains": ["gpus"], "out": tmp_path / "set", **options})
    assert not (tmp_path / "set").exists()


def test_a_folder_may_be_given_as_text(tmp_path):
    import armbench

    result = armbench.run("scripted/oracle", domains=["gpus"], sets=["design"], arms=["tooled"],
                          questions=["gpus-design-01"], out=str(tmp_path / "set"))
    assert result.directory == tmp_path / "set" and result.correct == 1


def test_the_package_lends_the_api_without_loading_it_for_its_other_modules():
    """`import armbench.types` (what a record reader needs) loads no model, engine or API module."""
    code = "import sys, armbench.types; print(' '.join(sorted(m for m in sys.modules if m.startswith('armbench'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "armbench.types" in loaded
    assert not [m for m in loaded if m.startswith(("armbench.api", "armbench.models", "armbench.engine"))], loaded
    import armbench

    assert armbench.run.__module__ == "armbench.api" and sorted(armbench.__all__) == sorted(
        ["Report", "RunResult", "UserError", "report", "run", "synthesize"])
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        armbench.nosuch  # noqa: B018
