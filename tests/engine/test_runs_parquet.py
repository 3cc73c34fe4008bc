"""runs.parquet: one typed column per RunRecord field, so any two run sets' tables concatenate."""
from __future__ import annotations

import polars as pl

from armbench.engine.store import RUNS_SCHEMA, RunSetStore, records_frame
from armbench.types import RunRecord
from tests.support.run_sets import make_manifest, make_record


def test_every_record_field_has_a_fixed_type():
    assert list(RUNS_SCHEMA) == list(RunRecord.model_fields)


def test_run_sets_with_all_null_columns_concatenate(tmp_path):
    priced, unpriced = RunSetStore(tmp_path / "priced"), RunSetStore(tmp_path / "unpriced")
    for store in (priced, unpriced):
        store.create(make_manifest())
    priced.append(make_record(actions_by_tool={"gpu_query": 2, "python": 1}, injected_faults=["timeout"],
                              call_providers=["openai", None]))
    # A local model's run set: every cost, answer and provider null.
    unpriced.append(make_record(cost_usd=None, answer=None, provider=None, correct=None, outcome=None,
                                actions=0, actions_by_tool={}, error="provider down", error_kind="infra"))
    frames = [pl.read_parquet(store.finish()) for store in (priced, unpriced)]
    assert frames[1]["cost_usd"].dtype == pl.Float64 and frames[1]["cost_usd"].null_count() == 1
    both = pl.concat(frames)
    assert both.schema == pl.Schema(RUNS_SCHEMA) and both.height == 2
    tools = both.select(pl.col("actions_by_tool").list.eval(pl.element().struct.field("tool")))["actions_by_tool"]
    assert tools.to_list() == [["gpu_query", "python"], []]
    assert both["injected_faults"].to_list() == [["timeout"], []]
    assert records_frame([]).schema == pl.Schema(RUNS_SCHEMA)
