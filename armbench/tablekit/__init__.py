"""Table domains: one table and its `domain.yaml` give a replica website, a typed query tool and
DATA.md, with nothing hand-written. A table domain's folder `armbench/domains/<name>/` holds
domain.yaml, source/ (the CSV and its SOURCE.md), data/ (the built table and DATA.md) and this
`__init__.py` (`bench domain new` writes it):

    from armbench.domains.spec import Domain
    from armbench.tablekit import TableDomain

    KIT = TableDomain(__file__)
    DOMAIN = Domain.in_folder(__file__, **KIT.declaration(__name__))
    create_app, tool_classes, build = KIT.create_app, KIT.tool_classes, KIT.build

Reading the spec is light; the site, the tool and the build load polars and FastAPI on first use.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from armbench.replicas.tables import TableDir
from armbench.tablekit.spec import TableSpec, load_spec

if TYPE_CHECKING:
    from fastapi import FastAPI

    from armbench.tools.base import Tool

__all__ = ["TableDomain", "TableSpec"]


class TableDomain:
    def __init__(self, init_file: str):
        self.folder = Path(init_file).resolve().parent
        self.spec = load_spec(self.folder)
        self.tables = TableDir(self.folder / "data")
        self._tools: list[type[Tool]] | None = None

    def declaration(self, module: str) -> dict[str, Any]:
        """`Domain`'s fields for the package `module` whose attributes are this kit's parts."""
        return {
            "name": self.spec.name,
            "title": self.spec.title,
            "port_offset": self.spec.port_offset,
            "app": f"{module}:create_app",
            "tools": f"{module}:tool_classes",
            "build": f"{module}:build",
            "shared_data": False,
        }

    def create_app(self) -> FastAPI:
        from armbench.tablekit.site import create_app

        return create_app(self.spec, self.tables)

    def tool_classes(self) -> list[type[Tool]]:
        """Made once: one class per process, as a hand-written domain's TOOLS are."""
        if self._tools is None:
            from armbench.tablekit.tool import tool_class

            self._tools = [tool_class(self.spec, self.tables)]
        return self._tools

    def build(self, shared_data: Path) -> list[Path]:
        """The table from the CSV in source/ (`shared_data` is not read: the data lives here)."""
        from armbench.tablekit.build import build_table

        return [build_table(self.spec, self.folder, self.tables)]
