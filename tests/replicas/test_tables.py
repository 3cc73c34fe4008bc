"""A TableDir: its hash covers every table of its folder by name and bytes; no tables is an error."""
import shutil

import polars as pl
import pytest

from armbench.domains import DOMAINS
from armbench.errors import UserError
from armbench.replicas.tables import TableDir


def test_the_hash_covers_every_table_of_the_folder_by_name_and_bytes(tmp_path):
    source = DOMAINS["worldbank"].tables
    for name in source.names():
        shutil.copy(source.path(name), tmp_path / f"{name}.parquet")
    assert TableDir(tmp_path).hash() == source.hash()
    with (tmp_path / "wb_regions.parquet").open("ab") as table:  # one of worldbank's six tables
        table.write(b"\0")
    assert TableDir(tmp_path).hash() != source.hash()
    (tmp_path / "wb_regions.parquet").rename(tmp_path / "wb_regions_renamed.parquet")
    assert TableDir(tmp_path).hash() != source.hash()


def test_a_folder_without_tables_is_an_error_not_an_empty_hash(tmp_path):
    with pytest.raises(UserError, match="no tables in .*bench data build"):
        TableDir(tmp_path).hash()
    with pytest.raises(UserError, match="no table 'x' in .*tables: none"):
        TableDir(tmp_path).load("x")


def test_writing_creates_the_folder_and_a_new_hash(tmp_path):
    tables = TableDir(tmp_path / "data")
    tables.write(pl.DataFrame({"a": [1]}), "t")
    before = tables.hash()
    tables.write(pl.DataFrame({"a": [2]}), "t")
    assert tables.names() == ["t"] and tables.hash() != before
