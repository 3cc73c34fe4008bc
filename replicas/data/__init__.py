"""The replica tables: one Parquet file per table, committed, with provenance in DATA.md.

Every table is loaded once per process; derivations (question references) and typed tools read
the same frames, so a reference answer and a tool result can never come from different data.
"""
from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import polars as pl

DATA_DIR = Path(__file__).resolve().parent


def table_names() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob("*.parquet"))


@cache
def load_table(name: str) -> pl.DataFrame:
    path = DATA_DIR / f"{name}.parquet"
    if not path.exists():
        raise KeyError(f"no replica table {name!r}; tables: {', '.join(table_names())}")
    return pl.read_parquet(path)


def write_table(frame: pl.DataFrame, name: str) -> Path:
    """Write `name`.parquet as every builder does: zstd level 19, with statistics."""
    target = DATA_DIR / f"{name}.parquet"
    frame.write_parquet(target, compression="zstd", compression_level=19, statistics=True)
    return target


@cache
def data_hash(pattern: str = "*") -> str:
    """sha256 over the table files whose names match `pattern` (a glob; every table by default)."""
    paths = sorted(DATA_DIR.glob(f"{pattern}.parquet"))
    if not paths:
        raise KeyError(f"no replica table matches {pattern!r}; tables: {', '.join(table_names())}")
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.stem.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
