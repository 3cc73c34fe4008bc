"""A run set's data hash covers its own domains' tables, and only those."""
import json

from armbench.domains import DOMAINS, data_hash
from armbench.paths import ROOT


def test_each_domain_hashes_its_own_tables_and_a_mix_hashes_them_all():
    hashes = {name: data_hash([name]) for name in DOMAINS}
    assert len(set(hashes.values())) == len(DOMAINS)
    both = data_hash(["gpus", "worldbank"])
    assert both == data_hash(["worldbank", "gpus", "gpus"]) and both not in hashes.values()


def test_hashes_are_those_of_the_committed_recording():
    """The move into armbench/domains/ kept each domain's hash: recordings still replay."""
    manifest = json.loads((ROOT / "results/recordings/local-qwen2.5-coder-0.5b-gpus/manifest.json").read_text())
    assert manifest["data_hash"] == data_hash(["gpus"])
