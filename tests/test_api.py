"""The Python API as the README shows it: its example is run here, as a doctest."""
from __future__ import annotations

import doctest
import re

from armbench.paths import ROOT


def readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python API"):readme.index("## Run engine")]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs_as_written(tmp_path):
    test = doctest.DocTestParser().get_doctest(readme_example(), {"run_set_folder": tmp_path / "set"},
                                               "README: Python API", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5
    assert (tmp_path / "set" / "runs.jsonl").exists()


def test_the_api_module_example_runs_as_written(tmp_path):
    import armbench.api

    finder = doctest.DocTestFinder()
    [test] = [t for t in finder.find(armbench.api, globs={"run_set_folder": tmp_path / "api"}) if t.examples]
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries == 5
