"""DOMAINS: the only registry of domains. Adding a domain = its folder here + its name in
BUILT_IN below (+ its question files). A domain package from outside the project (it defines `DOMAIN`) joins with
`register(DOMAIN)`, or for `bench` with `ARMBENCH_DOMAINS=pkg.one,pkg.two` (read by the CLI at start,
not at import: a domain package imports this one, so importing it must not import them).
"""
from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from armbench.domains.spec import Domain
from armbench.errors import UserError
from armbench.replicas.serve import endpoint

if TYPE_CHECKING:
    import polars as pl

__all__ = ["DOMAINS", "data_hash", "find_domain", "register", "register_from_environment", "replica_address", "tables"]

EXTRA_DOMAINS_ENV = "ARMBENCH_DOMAINS"

BUILT_IN = ("gpus", "worldbank", "funds")  # the packages under armbench/domains/, in port order
DOMAINS: dict[str, Domain] = {name: importlib.import_module(f"{__name__}.{name}").DOMAIN for name in BUILT_IN}


def register(new: Domain) -> None:
    """Add a domain to DOMAINS (its name and port offset must be free)."""
    clash = next((d for d in DOMAINS.values() if d.name == new.name or d.port_offset == new.port_offset), None)
    if clash is not None and clash != new:
        raise UserError(f"domain {new.name!r} (port offset {new.port_offset}) clashes with {clash.name!r} "
                        f"(port offset {clash.port_offset})")
    DOMAINS[new.name] = new


def register_from_environment() -> None:
    """Register the domain packages `ARMBENCH_DOMAINS` names."""
    for module in filter(None, (m.strip() for m in os.environ.get(EXTRA_DOMAINS_ENV, "").split(","))):
        try:
            found = importlib.import_module(module).DOMAIN
        except Exception as error:  # whatever a user's package raises on import, one line says so
            raise UserError(f"{EXTRA_DOMAINS_ENV}: cannot load a DOMAIN from {module!r} "
                            f"({type(error).__name__}: {error})") from None
        if not isinstance(found, Domain):
            raise UserError(f"{EXTRA_DOMAINS_ENV}: {module}.DOMAIN is a {type(found).__name__}, not a Domain")
        register(found)


def find_domain(name: str) -> Domain:
    found = DOMAINS.get(name)
    if found is None:
        raise UserError(f"no domain {name!r}; domains: {', '.join(DOMAINS)}")
    return found


def replica_address(name: str) -> str:
    """Where the domain's replica listens now (http://127.0.0.1:<port base + offset>)."""
    return endpoint(find_domain(name).replica).base_url


def data_hash(names: Iterable[str]) -> str:
    """The data hash of these domains' tables: adding or rebuilding another domain's data leaves a
    run set's hash, its resume and its recording's comparisons alone."""
    hashes = [find_domain(name).tables.hash() for name in sorted(set(names))]
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
