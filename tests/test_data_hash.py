"""A run set's data hash covers its own domains' tables, and only those."""
import shutil

import pytest

import replicas.data as data
from replicas.serve import REPLICAS, replica_data_hash


def test_each_domain_hashes_its_own_tables_and_a_mix_hashes_them_all():
    hashes = {domain: replica_data_hash([domain]) for domain in REPLICAS}
    assert len(set(hashes.values())) == len(REPLICAS)
    both = replica_data_hash(["gpus", "worldbank"])
    assert both == replica_data_hash(["worldbank", "gpus", "gpus"]) and both not in hashes.values()


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """The replica tables in a folder of the test's own, so it can change them."""
    for path in data.DATA_DIR.glob("*.parquet"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    data.data_hash.cache_clear()
    yield tmp_path
    data.data_hash.cache_clear()


def test_changing_one_table_changes_only_its_domains_hash(data_copy):
    before = {domain: replica_data_hash([domain]) for domain in REPLICAS}
    with (data_copy / "wb_regions.parquet").open("ab") as table:  # one of worldbank's six tables
        table.write(b"\0")
    data.data_hash.cache_clear()
    after = {domain: replica_data_hash([domain]) for domain in REPLICAS}
    assert [d for d in REPLICAS if before[d] != after[d]] == ["worldbank"]


def test_a_domain_whose_tables_are_missing_is_an_error_not_an_empty_hash(data_copy):
    (data_copy / "funds.parquet").unlink()
    with pytest.raises(KeyError, match="no replica table matches 'funds'"):
        replica_data_hash(["funds"])
