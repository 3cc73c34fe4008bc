"""Rebuild the committed Parquet tables from `../shared/data` (run by `bench data build`).

Nothing calls this at run time: the Parquet files are committed so a fresh clone needs no build.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from replicas.data import write_table
from replicas.data.funds import build_funds
from replicas.data.worldbank import build_worldbank


def build_gpus(shared_data: Path) -> Path:
    """gpus.csv -> gpus.parquet: typed release dates, `tpu_url` renamed to `source_url`."""
    source = shared_data / "gpus" / "gpus.csv"
    frame = pl.read_csv(source, infer_schema_length=None)
    frame = frame.with_columns(pl.col("release_date").str.to_date("%Y-%m-%d")).rename(
        {"tpu_url": "source_url"}
    )
    return write_table(frame, "gpus")


# Each builder writes one table (returns its path) or several (returns a list of paths).
BUILDERS = {"gpus": build_gpus, "worldbank": build_worldbank, "funds": build_funds}


def build_all(shared_data: Path) -> list[Path]:
    missing = [name for name in BUILDERS if not (shared_data / name).is_dir()]
    if missing:
        raise FileNotFoundError(
            f"shared data folder {shared_data} lacks {', '.join(missing)}; pass --source"
        )
    built: list[Path] = []
    for build in BUILDERS.values():
        result = build(shared_data)
        built.extend(result if isinstance(result, list) else [result])
    return built
