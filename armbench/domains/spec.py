"""What a domain is: one folder under `armbench/domains/` whose `__init__.py` defines `DOMAIN`.

The heavy parts (the replica app, the typed tools, the table builder) are named as
"module:attribute" and loaded on first use, so `armbench.domains` imports in milliseconds and a
bad `--domain` is refused before polars, FastAPI or LiteLLM load.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from armbench.replicas.serve import Replica
from armbench.replicas.tables import TableDir

if TYPE_CHECKING:
    from armbench.tools.base import Tool


def load(reference: str) -> Any:
    """The attribute a "module:attribute" reference names."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Domain:
    name: str  # the folder's name; questions live in questions/<name>/
    title: str  # how every arm's system prompt names the replica
    port_offset: int  # the replica's port = port base + this; fixed, so its port never moves
    app: str  # "module:factory" of the replica (an ASGI app with /healthz)
    tools: str  # "module:attribute": the list of the tooled arm's typed Tool classes
    build: str  # "module:function": function(shared data folder) -> the table paths it wrote
    tables: TableDir  # the committed Parquet tables (the domain's data/ folder)

    @classmethod
    def in_folder(cls, init_file: str, **fields: Any) -> Domain:
        """The domain whose `__init__.py` is `init_file`, its tables in the folder's `data/`."""
        return cls(tables=TableDir(Path(init_file).resolve().parent / "data"), **fields)

    @property
    def replica(self) -> Replica:
        return Replica(self.name, self.port_offset, self.app, self.tables.hash())

    def tool_classes(self) -> list[type[Tool]]:
        return list(load(self.tools))

    def build_tables(self, shared_data: Path) -> list[Path]:
        return list(load(self.build)(shared_data))
