"""`../shared/data/gpus/gpus.csv` -> `gpus.parquet` (run by `bench data build`).

Nothing calls this at run time: the Parquet file is committed so a fresh clone needs no build.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.domains.gpus import TABLES


def build(shared_data: Path) -> list[Path]:
    """gpus.csv -> gpus.parquet: typed release dates, `tpu_url` renamed to `source_url`."""
    frame = pl.read_csv(shared_data / "gpus" / "gpus.csv", infer_schema_length=None)
    frame = frame.with_columns(pl.col("release_date").str.to_date("%Y-%m-%d")).rename(
        {"tpu_url": "source_url"}
    )
    return [TABLES.write(frame, "gpus")]
