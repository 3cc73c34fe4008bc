"""Site-tool parity: every domain's replica site holds the rows and values its typed tool does
(armbench/domains/parity.py), and the check names what differs."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from armbench.domains import DOMAINS, reading
from armbench.domains.crashes.tools import CrashQuery
from armbench.domains.parity import check_parity, key_of, reader_path, reader_source, same_value, site_reader, tool_of
from armbench.replicas.serve import Replica
from armbench.replicas.supervisor import replicas_running

READ = [name for name, domain in DOMAINS.items() if site_reader(domain) is not None]


def test_every_domain_has_a_site_reader():
    assert READ == list(DOMAINS)


@pytest.mark.crawl
@pytest.mark.parametrize("name", READ)
def test_the_site_and_the_tool_hold_the_same_rows(name, replica_env):
    domain = DOMAINS[name]
    with replicas_running([domain.replica]) as endpoints:
        parity = check_parity(domain, endpoints[name].base_url)
    assert parity.problems == []
    assert parity.site_rows >= parity.tool_rows > 0
    print(parity.summary)


def top_level_names(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


@pytest.mark.parametrize("name", READ)
def test_no_reader_redefines_a_name_of_the_reading_kit(name):
    """In the sandbox the kit and the reader share one namespace, the reader's text second."""
    kit = top_level_names(Path(reading.__file__).read_text())
    assert top_level_names(reader_path(DOMAINS[name]).read_text()) & kit == set()


STANDALONE = """
import json, sys
namespace = {}
exec(sys.stdin.read(), namespace)
rows = namespace["read_site"](sys.argv[1])
print(json.dumps([len(rows), sorted({name for row in rows for name in row})]))
"""


@pytest.mark.crawl
@pytest.mark.parametrize("name", ["crashes", "gpus"])
def test_a_reader_runs_standalone_as_in_the_sandbox(name, replica_env):
    """Without armbench (python -I from an empty folder): the kit and the reader as one script."""
    domain = DOMAINS[name]
    with replicas_running([domain.replica]) as endpoints:
        ran = subprocess.run([sys.executable, "-I", "-c", STANDALONE, endpoints[name].base_url.rstrip("/")],
                             input=reader_source(domain), capture_output=True, text=True, timeout=300,
                             cwd=tempfile.gettempdir(), check=False)
        parity = check_parity(domain, endpoints[name].base_url)
    assert ran.returncode == 0, ran.stderr[-2000:]
    count, fields = json.loads(ran.stdout)
    assert count == parity.site_rows and set(site_reader(domain).KEY) <= set(fields)


def test_a_row_planted_in_a_page_is_named_as_on_the_site_not_in_the_tool(replica_env):
    crashes = DOMAINS["crashes"]
    planted = Replica(crashes.name, crashes.port_offset, "tests.support.planted_site:create_app", crashes.replica.data_hash)
    with replicas_running([planted]) as endpoints:
        parity = check_parity(crashes, endpoints["crashes"].base_url)
    assert parity.problems == ["crashes: on the site, not in the tool: 1 row(s), e.g. state=Texas, year=2014"]


def test_a_tool_field_no_page_shows_is_named(replica_env, monkeypatch):
    crashes = DOMAINS["crashes"]
    table, frame = CrashQuery.table, CrashQuery.frame
    monkeypatch.setattr(CrashQuery, "table", replace(table, kinds={**table.kinds, "seatbelt_use_pct": "number"}))
    monkeypatch.setattr(CrashQuery, "frame", staticmethod(lambda: frame().with_columns(seatbelt_use_pct=pl.lit(90.0))))
    with replicas_running([crashes.replica]) as endpoints:
        parity = check_parity(crashes, endpoints["crashes"].base_url)
    [problem] = parity.problems
    assert problem.startswith("crashes: tool field seatbelt_use_pct is on no page: 1000 row(s), e.g. state=")


# A scope per reader that narrows with its site's filters: (domain, field -> value).
SCOPES = [("gpus", {"manufacturer": "Intel"}), ("funds", {"category": "Energy"}), ("banks", {"state": "IL"}),
          ("nba", {"season": 2011}), ("exoplanets", {"disc_year": 1995}), ("moon", {"target": "Phobos"})]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "scope"), SCOPES, ids=[name for name, _ in SCOPES])
def test_a_reader_given_a_scope_reads_the_scoped_rows_through_the_sites_filters(name, scope, replica_env):
    """What a derived solution with a scope relies on: every row in the scope is read (the same keys
    as the tool's rows in it), and the site's filters spared it most of the others."""
    domain = DOMAINS[name]
    reader, tool = site_reader(domain), tool_of(domain)
    with replicas_running([domain.replica]) as endpoints:
        rows = reader.read_site(endpoints[name].base_url.rstrip("/"), scope)
    in_scope = {key_of(row, reader.KEY) for row in rows if "out_of_tool" not in row
                and all(same_value(tool.table.kinds[field], row[field], value) for field, value in scope.items())}
    frame = tool.frame()
    for field, value in scope.items():
        frame = frame.filter(pl.col(field) == value)
    expected = {key_of(row, reader.KEY) for row in frame.select(list(reader.KEY)).to_dicts()}
    assert in_scope == expected and expected
    assert len(rows) < tool.frame().height / 4
