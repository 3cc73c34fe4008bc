"""A run set's data hash covers its own domains' tables, and only those."""
import shutil

import pytest

from armbench.domains import DOMAINS, data_hash
from armbench.replicas.tables import TableDir


def test_each_domain_hashes_its_own_tables_and_a_mix_hashes_them_all():
    hashes = {name: data_hash([name]) for name in DOMAINS}
    assert len(set(hashes.values())) == len(DOMAINS)
    both = data_hash(["gpus", "worldbank"])
    assert both == data_hash(["worldbank", "gpus", "gpus"]) and both not in hashes.values()


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
    with pytest.raises(KeyError, match="no tables in"):
        TableDir(tmp_path).hash()


def test_hashes_are_those_of_the_committed_recording():
    """The move into armbench/domains/ kept each domain's hash: recordings still replay."""
    import json

    from armbench.paths import ROOT

    manifest = json.loads((ROOT / "results/recordings/local-qwen2.5-coder-0.5b-gpus/manifest.json").read_text())
    assert manifest["data_hash"] == data_hash(["gpus"])
