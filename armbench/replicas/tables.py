"""A domain's tables: one Parquet file per table in the domain's `data/` folder, committed, with
provenance in that folder's DATA.md.

Every table is loaded once per process; derivations (question references), replica sites and
typed tools read the same frames, so a reference answer and a tool result can never come from
different data. polars loads on first use, so naming a domain costs no heavy import.
"""
from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from armbench.errors import UserError

if TYPE_CHECKING:
    import polars as pl


class TableDir:
    """The Parquet tables of one folder."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._hash: str | None = None

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.parquet"))

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.parquet"

    def load(self, name: str) -> pl.DataFrame:
        path = self.path(name)
        if not path.exists():
            raise UserError(f"no table {name!r} in {self.directory} (tables: {', '.join(self.names()) or 'none'}); "
                            "build them with `bench data build`")
        return _read(path)

    def rows(self, name: str) -> int:
        """The table's row count from its Parquet footer: a description can state it while making
        the tool (as hashing a tooled arm's manifest does) reads no rows."""
        import polars as pl

        if not self.path(name).exists():
            self.load(name)  # raises the UserError that says how to build the table
        return pl.scan_parquet(self.path(name)).select(pl.len()).collect().item()

    def write(self, frame: pl.DataFrame, name: str) -> Path:
        """Write `name`.parquet as every builder does: zstd level 19, with statistics."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._hash = None
        target = self.path(name)
        frame.write_parquet(target, compression="zstd", compression_level=19, statistics=True)
        _read.cache_clear()  # a later load reads what was written, not the frame from before
        return target

    def hash(self) -> str:
        """sha256 over the table files (name and bytes, in name order), computed once."""
        if self._hash is None:
            names = self.names()
            if not names:
                raise UserError(f"no tables in {self.directory}; build them with `bench data build`")
            digest = hashlib.sha256()
            for name in names:
                digest.update(name.encode())
                digest.update(self.path(name).read_bytes())
            self._hash = digest.hexdigest()
        return self._hash


@cache
def _read(path: Path) -> pl.DataFrame:
    import polars as pl

    return pl.read_parquet(path)

