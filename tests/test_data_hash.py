"""A run set's data hash covers its own domains' tables, and only those."""
import shutil

import replicas.data as data
from replicas.serve import REPLICAS, replica_data_hash


def test_each_domain_hashes_its_own_tables_and_a_mix_hashes_them_all():
    hashes = {domain: replica_data_hash([domain]) for domain in REPLICAS}
    assert len(set(hashes.values())) == len(REPLICAS)
    both = replica_data_hash(["gpus", "worldbank"])
    assert both == replica_data_hash(["worldbank", "gpus", "gpus"]) and both not in hashes.values()


def test_another_domains_table_leaves_a_domains_hash_alone(tmp_path, monkeypatch):
    for path in data.DATA_DIR.glob("*.parquet"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    data.data_hash.cache_clear()
    try:
        gpus_before, all_before = data.data_hash("gpus"), data.data_hash()
        shutil.copy(tmp_path / "funds.parquet", tmp_path / "zz_new_domain.parquet")
        data.data_hash.cache_clear()
        assert data.data_hash("gpus") == gpus_before and data.data_hash() != all_before
    finally:
        data.data_hash.cache_clear()
