"""Which armbench this is: the installed version, and the commit of the checkout it runs from.

Both go into manifests and exported logs, and `bench --version` prints them. The commit is read
only from armbench's own checkout: an installed wheel has none, even inside another project's
git repository.
"""
from __future__ import annotations

import subprocess

from armbench.paths import ROOT


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("armbench")
    except PackageNotFoundError:
        return "unknown"


def git_commit() -> str | None:
    if not (ROOT / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()
