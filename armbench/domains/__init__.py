"""DOMAINS: the only registry of domains. Adding a domain = its folder here, whose `__init__.py`
defines `DOMAIN` (+ its question files): every such folder is found, in port order. A table
domain's folder is written by `bench domain new` (armbench/tablekit). A domain package from outside
the project (it defines `DOMAIN`) joins with `register(DOMAIN)`, or for `bench` with
`ARMBENCH_DOMAINS=pkg.one,pkg.two` or `ARMBENCH_DOMAINS_DIR=folder` (every package in the folder,
as here; `bench domain new` writes there when it is set). The CLI reads both at start, not at
import: a domain package imports this one, so importing it must not import them.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from armbench.domains.spec import Domain
from armbench.errors import UserError
from armbench.replicas.serve import endpoint

if TYPE_CHECKING:
    import polars as pl

__all__ = ["BROKEN", "DOMAINS", "data_hash", "find_domain", "register", "register_from_environment", "replica_address", "tables"]

EXTRA_DOMAINS_ENV = "ARMBENCH_DOMAINS"
DOMAINS_DIR_ENV = "ARMBENCH_DOMAINS_DIR"
BUILT_IN_DIR = Path(__file__).resolve().parent

DOMAINS: dict[str, Domain] = {}
# Packages in a domains folder that would not load, by folder name -> why (one line). One broken
# folder must not stop every command: it is left out, `bench` warns, and naming it is an error.
BROKEN: dict[str, str] = {}


def register(new: Domain) -> None:
    """Add a domain to DOMAINS (its name and port offset must be free)."""
    clash = next((d for d in DOMAINS.values() if d.name == new.name or d.port_offset == new.port_offset), None)
    if clash is not None and clash != new:
        raise UserError(f"domain {new.name!r} (port offset {new.port_offset}) clashes with {clash.name!r} "
                        f"(port offset {clash.port_offset})")
    DOMAINS[new.name] = new


def packages_in(folder: Path) -> list[str]:
    return sorted(path.parent.name for path in folder.glob("*/__init__.py"))


def load(module: str, source: str) -> Domain:
    """The `DOMAIN` of the package `module`; a UserError naming `source` (where it was found)."""
    try:
        found = importlib.import_module(module).DOMAIN
    except Exception as error:  # whatever a package raises on import, one line says so
        raise UserError(f"{source}: cannot load a DOMAIN from {module!r} ({type(error).__name__}: "
                        f"{' '.join(str(error).split())})") from None
    if not isinstance(found, Domain):
        raise UserError(f"{source}: {module}.DOMAIN is a {type(found).__name__}, not a Domain")
    return found


def register_folder(folder: Path, package: str | None, source: str, skip: Iterable[str] = ()) -> None:
    """Register every domain package in `folder` but `skip` (by port offset); one that fails is in BROKEN."""
    found = []
    for name in packages_in(folder):
        if name in skip:
            continue
        try:
            found.append(load(f"{package}.{name}" if package else name, source))
        except UserError as error:
            BROKEN[name] = str(error)
    for domain in sorted(found, key=lambda domain: domain.port_offset):
        register(domain)


register_folder(BUILT_IN_DIR, __name__, str(BUILT_IN_DIR))


def domains_dir() -> Path:
    """Where new domains go: `ARMBENCH_DOMAINS_DIR`, else armbench/domains/."""
    return Path(os.environ.get(DOMAINS_DIR_ENV) or BUILT_IN_DIR)


def register_from_environment() -> None:
    """Register the packages in `ARMBENCH_DOMAINS_DIR` and those `ARMBENCH_DOMAINS` names."""
    modules = [m.strip() for m in os.environ.get(EXTRA_DOMAINS_ENV, "").split(",")]
    folder = os.environ.get(DOMAINS_DIR_ENV)
    if folder:
        if not Path(folder).is_dir():
            raise UserError(f"{DOMAINS_DIR_ENV}={folder!r} is not a folder")
        shadowing = [name for name in packages_in(Path(folder)) if importlib.util.find_spec(name) is not None]
        for name in shadowing:  # checked before the folder goes first on the path, where it would win
            BROKEN[name] = (f"{DOMAINS_DIR_ENV}={folder}: the package {name!r} has the name of a Python module; "
                            "rename its folder")
        # Importable here and in the replica servers this process starts (they inherit PYTHONPATH).
        sys.path.insert(0, folder)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")]))
        register_folder(Path(folder), None, f"{DOMAINS_DIR_ENV}={folder}", skip=shadowing)
    for module in filter(None, modules):
        register(load(module, EXTRA_DOMAINS_ENV))


def find_domain(name: str) -> Domain:
    found = DOMAINS.get(name)
    if found is None and name in BROKEN:
        raise UserError(BROKEN[name])
    if found is None:
        raise UserError(f"no domain {name!r}; domains: {', '.join(DOMAINS)}")
    return found


def replica_address(name: str) -> str:
    """Where the domain's replica listens now (http://127.0.0.1:<port base + offset>)."""
    return endpoint(find_domain(name).replica).base_url


def data_hash(names: Iterable[str]) -> str:
    """The data hash of these domains' tables: adding or rebuilding another domain's data leaves a
    run set's hash, its resume and its recording's comparisons alone."""
    return combined_hash({name: find_domain(name).tables.hash() for name in names})


def combined_hash(per_domain: dict[str, str]) -> str:
    """A run set's hash of something each domain has (its data, its prompt): the one domain's, or a
    hash over every domain's in name order."""
    hashes = [per_domain[domain] for domain in sorted(per_domain)]
    return hashes[0] if len(hashes) == 1 else hashlib.sha256("".join(hashes).encode()).hexdigest()


def tables() -> dict[str, pl.DataFrame]:
    """Every domain's tables by table name (what question derivations query)."""
    found: dict[str, pl.DataFrame] = {}
    for entry in DOMAINS.values():
        for name in entry.tables.names():
            if name in found:
                raise UserError(f"table {name!r} of domain {entry.name!r} has the name of another domain's table")
            found[name] = entry.tables.load(name)
    return found
