"""The one-screen summary `bench report` prints by default, and `--full`, which prints every table.

Ten domains, both arms, design and held-out sets, one run each: browsing misses every domain's
first held-out question and spends more; tooled is right every time.
"""
import statistics

import pytest
from rich.console import Console

from armbench.analysis.overview import headlines, study_table
from armbench.analysis.publish import all_tables
from armbench.analysis.report import by_domain
from armbench.engine.store import RunSetStore
from tests.support.run_sets import make_manifest, make_record

DOMAINS = ("banks", "crashes", "drugs", "exoplanets", "funds", "gpus", "moon", "mortality", "nba", "worldbank")
SETS = {"design": 2, "heldout": 3}  # questions per set
WRONG = dict(correct=False, outcome="fully_incorrect", miss_reason="wrong")


def browsing(question: int, **fields):
    return dict(actions=9 + question, cost_usd=0.012, prompt_tokens=12_000, completion_tokens=600, **fields)


def tooled(question: int, **fields):
    return dict(actions=1, cost_usd=0.001, prompt_tokens=900, completion_tokens=100, **fields)


def ten_domain_records(**fields):
    records = []
    for domain in DOMAINS:
        for set_name, count in SETS.items():
            for n in range(count):
                missed = WRONG if (set_name, n) == ("heldout", 0) else {}
                for arm, figures in (("browsing", browsing(n, **missed)), ("tooled", tooled(n))):
                    records.append(make_record(domain=domain, set=set_name, arm=arm,
                                               question_id=f"{domain}-{set_name}-{n}", **{**figures, **fields}))
    return records


@pytest.fixture
def ten_domains(tmp_path):
    store = RunSetStore(tmp_path / "ten")
    store.create(make_manifest(question_sets={f"{d}/{s}": "a" for d in DOMAINS for s in SETS}))
    for record in ten_domain_records():
        store.append(record)
    return store


@pytest.fixture
def printed(cli, monkeypatch):
    """`bench` with its output at a given terminal width."""
    def at(width: int, *args: str) -> str:
        monkeypatch.setattr("armbench.cli.out", Console(width=width, color_system=None))
        code, out, _ = cli(*args)
        assert code == 0
        return out
    return at


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_the_summary_is_one_screen_with_a_row_per_domain(ten_domains, printed, width):
    lines = printed(width, "report", str(ten_domains.directory)).splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert all(len(line) <= width for line in lines)
    first_words = [line.split()[0] for line in lines if line.split()]
    parts = first_words.count("domain")  # a header line per part of the table
    assert parts >= 1
    for domain in (*DOMAINS, "all"):
        assert first_words.count(domain) == parts, domain  # a grid row per part, never a stacked block
    text = "\n".join(lines)
    assert "tooled 50/50 (95% CI 93–100%) vs browsing 40/50" in " ".join(text.split())
    assert "Accuracy, actions, cost and time" not in text
    footer = " ".join(" ".join(lines[-2:]).split())  # a long folder's name wraps
    assert "`bench report --full`" in footer and f"report.md and report.html in {ten_domains.directory}" in footer


@pytest.mark.slow
def test_full_prints_every_table(ten_domains, printed):
    text = " ".join(printed(200, "report", str(ten_domains.directory), "--full").split())
    for table in all_tables(ten_domains.records_to_report()):
        assert table.title in text, table.title
    assert "report written to" in text


def test_the_headline_has_accuracy_actions_and_cost_per_correct():
    [line] = headlines(by_domain(ten_domain_records()))
    browsing_per_correct = 0.012 * 50 / 40
    assert line == (f"tooled 50/50 (95% CI 93–100%) vs browsing 40/50 (95% CI 67–89%) · median actions 1 vs "
                    f"{statistics.median([9, 10, 9, 10, 11] * 10):g} · cost per correct $0.0010 vs "
                    f"${browsing_per_correct:.4f} (tooled/browsing 1/15)")


def test_when_every_cost_is_zero_the_figures_are_tokens():
    figures = by_domain(ten_domain_records(cost_usd=0.0))
    [line] = headlines(figures)
    assert "tokens per correct 1,000 vs 15,750" in line and "costs $0" in line
    table = study_table(figures)
    assert "tokens/correct\ntooled" in table.columns and not any("cost" in column for column in table.columns)


def test_one_arm_has_its_own_figures_and_no_pair():
    figures = by_domain([r for r in ten_domain_records() if r.arm == "tooled"])
    assert headlines(figures) == ["tooled 50/50 (95% CI 93–100%) · median actions 1 · cost per correct $0.0010"]
    table = study_table(figures)
    assert table.columns[1:] == ["correct\ntooled", "actions\ntooled", "cost/run\ntooled", "cost/correct\ntooled",
                                 "wall s\ntooled"]
    assert table.rows[0] == ["banks", "5/5", "1", "$0.0010", "$0.0010", "2.00"]


def test_a_third_arm_gets_its_columns_and_a_headline_per_pair():
    synthesized = [r.model_copy(update={"arm": "synthesized", "run_id": r.run_id.replace("tooled", "synthesized")})
                   for r in ten_domain_records() if r.arm == "tooled"]
    figures = by_domain(ten_domain_records() + synthesized)
    assert [line.split(" vs ")[:2] for line in headlines(figures)] == [
        ["synthesized 50/50 (95% CI 93–100%)", "browsing 40/50 (95% CI 67–89%) · median actions 1"],
        ["tooled 50/50 (95% CI 93–100%)", "browsing 40/50 (95% CI 67–89%) · median actions 1"],
        ["tooled 50/50 (95% CI 93–100%)", "synthesized 50/50 (95% CI 93–100%) · median actions 1"],
    ]
    assert study_table(figures).columns[1:4] == ["correct\nbrowsing", "correct\nsynthesized", "correct\ntooled"]


@pytest.mark.parametrize("table_format", ["markdown", "latex", "csv"])
def test_one_run_sets_study_table_prints_for_a_paper_with_its_intervals(cli, ten_domains, table_format):
    code, out, _err = cli("report", str(ten_domains.directory), "--format", table_format)
    assert code == 0 and "browsing CI" in out and "tooled CI" in out
    assert all(domain in out for domain in DOMAINS)
    if table_format == "csv":
        assert len(out.strip().splitlines()) == 1 + len(DOMAINS) + 1  # a header, a row per domain, all
