"""What a domain is: one folder under `armbench/domains/` whose `__init__.py` defines `DOMAIN`.

The heavy parts (the replica app, the typed tools, the table builder) are named as
"module:attribute" and loaded on first use, so `armbench.domains` imports in milliseconds and a
bad `--domain` is refused before polars, FastAPI or LiteLLM load.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from armbench.errors import UserError
from armbench.replicas.serve import MAX_OFFSET, Replica, load_reference
from armbench.replicas.tables import TableDir

if TYPE_CHECKING:
    from armbench.tools.base import Tool

REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclass(frozen=True)
class Domain:
    name: str  # the folder's name; questions live in questions/<name>/
    title: str  # how every arm's system prompt names the replica
    port_offset: int  # the replica's port = port base + this; fixed and unique, so its port never moves
    app: str  # "module:factory" of the replica: an ASGI app whose /healthz answers
    #           {"replica": name, "data_hash": tables.hash()} (the kit's pages and the serving check read it)
    tools: str  # "module:attribute": the list of the tooled arm's typed Tool classes, or a function
    #             returning it (a table domain builds its tool on first use)
    build: str  # "module:function": function(shared data folder) -> the table paths it wrote
    tables: TableDir  # the committed Parquet tables (the domain's data/ folder)
    shared_data: bool = True  # its build reads the shared data folder (a table domain's reads its source/)

    def __post_init__(self) -> None:
        if not 0 <= self.port_offset <= MAX_OFFSET:
            raise UserError(f"domain {self.name!r}: port_offset {self.port_offset} is outside 0-{MAX_OFFSET}")
        for field in ("app", "tools", "build"):
            if not REFERENCE.fullmatch(getattr(self, field)):
                raise UserError(f"domain {self.name!r}: {field} must be 'module:attribute', "
                                f"not {getattr(self, field)!r}")

    @classmethod
    def in_folder(cls, init_file: str, **fields: Any) -> Domain:
        """The domain whose `__init__.py` is `init_file`, its tables in the folder's `data/`."""
        return cls(tables=TableDir(Path(init_file).resolve().parent / "data"), **fields)

    @property
    def known_tool(self) -> Path:
        """Where a known-good synthesized tool for the domain would be (its `tool.py` and
        `tool.json`, as a frozen tool's folder holds them): what `scripted/synth-oracle` submits."""
        return self.tables.directory.parent / "known_tool"

    @property
    def replica(self) -> Replica:
        return Replica(self.name, self.port_offset, self.app, self.tables.hash())

    def tool_classes(self) -> list[type[Tool]]:
        tools = self._load("tools")
        return list(tools() if callable(tools) else tools)

    def tool_manifest_hash(self) -> str:
        """Hash of the typed tools' names, descriptions and schemas, as the tooled arm offers them
        (the replica's address, should a description show it, named as questions name it): what a
        held-out set is written against (questions.py's lock)."""
        from armbench.replicas.serve import endpoint
        from armbench.tools.base import ArmTools

        typed = ArmTools("typed", [cls() for cls in self.tool_classes()])
        return typed.manifest_hash({endpoint(self.replica).base_url: f"{{replica:{self.name}}}"})

    def build_tables(self, shared_data: Path) -> list[Path]:
        return list(self._load("build")(shared_data))

    def _load(self, field: str) -> Any:
        reference = getattr(self, field)
        try:
            return load_reference(reference)
        except (ImportError, AttributeError) as error:
            raise UserError(f"domain {self.name!r}: cannot load its {field} {reference!r} ({error})") from None
