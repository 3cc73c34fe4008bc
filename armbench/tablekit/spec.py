"""`domain.yaml`: everything a table domain declares, read into `TableSpec` (pydantic).

A table domain is one table of entities shown three ways: a replica website (a filterable,
sortable list, one page per entity, optionally one page per value of a grouping field), a typed
query tool over the same rows (`armbench.tools.table_query`), and DATA.md. This module only reads
and checks the declaration: it imports no polars or FastAPI, so naming a domain stays light.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from armbench.errors import UserError, read_text

SPEC_FILE = "domain.yaml"
NAME = re.compile(r"[a-z][a-z0-9_]{0,30}")  # a domain's (and its table's) name
FIELD_NAME = r"^[a-z][a-z0-9_]*$"
Kind = Literal["text", "number", "date", "bool"]
# What the kit puts beside the declared fields, so no field may take the name.
RESERVED_FIELDS = {
    "source_url": "the typed tool adds it to every row (the entity's page on the site)",
    "href": "the site's list rows link to their page under that name",
}
LIST_PARAMS = ("sort", "order", "page", "q")  # the list page's own parameters: no text or bool filter's


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(Strict):
    """One column, as the site, the tool and DATA.md describe it."""

    name: str = Field(pattern=FIELD_NAME)
    kind: Kind
    column: str = ""  # the CSV header it is read from, when that is not `name`
    label: str = ""  # the site's column header; the name, spaced, when empty
    unit: str = ""  # "people", "USD", "km²": shown beside values and in the tool's field list
    description: str = ""
    example: Any = None  # a value the tool's description may show
    nulls: str = ""  # what a missing value means ("not reported")

    @property
    def header(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def source_column(self) -> str:
        return self.column or self.name


class EntitySpec(Strict):
    """What one row is. `key` names it (the list's links, the search box, the default order, the
    page's heading); it is unique per row, or unique together with the `within` fields (a name
    unique per state, per planet): the entity's page is <site.path>/<within values>/<key value>."""

    key: str
    within: list[str] = []
    one: str  # "city": "1 city matches"
    many: str  # "cities"

    @field_validator("within", mode="before")
    @classmethod
    def one_or_several(cls, value: Any) -> Any:
        """`within: state` and `within: null` read as [state] and []."""
        return [] if value is None else [value] if isinstance(value, str) else value

    @property
    def address_fields(self) -> list[str]:
        """The fields whose values, in this order, make an entity's page address."""
        return [*self.within, self.key]

    def page_key(self, values: Sequence[Any]) -> str:
        """An entity's address below the list page, unquoted, from its `address_fields` values:
        "Tokyo", or "Moon/Hall" with `within: [target]` (the site's pages are found by it)."""
        return "/".join(str(value) for value in values)


class SiteSpec(Strict):
    path: str = Field(pattern=r"^/[a-z0-9][a-z0-9_-]*$")  # the list page; entity pages below it
    heading: str  # the list page's <h1>
    list_fields: list[str] = Field(min_length=1)  # the list's columns, the first links to the entity
    filters: list[str] = []  # fields the list's form filters on
    page_size: int = Field(100, ge=1, le=1000)  # rows per list page
    search: bool = True  # a "name contains" box over the key field
    group_by: list[str] = []  # fields: each an index of its values, one page per value (per year, per state)
    group_counts: bool = True  # the indexes show each value's row count (off where that gives answers away)

    @field_validator("group_by", mode="before")
    @classmethod
    def one_or_several(cls, value: Any) -> Any:
        """`group_by: country` and `group_by: null` read as [country] and []."""
        return [] if value is None else [value] if isinstance(value, str) else value


class ExampleSpec(Strict):
    """The tool description's one worked example: what it asks, and the arguments."""

    says: str
    args: dict[str, Any]

    @field_validator("args")
    @classmethod
    def json_arguments(cls, args: dict[str, Any]) -> dict[str, Any]:
        """A model sends JSON: an unquoted 2001-02-03 (a YAML date) is no argument it could send."""
        try:
            json.dumps(args)
        except TypeError as error:
            raise ValueError(f"tool.example.args must be JSON values ({error}); quote dates") from None
        return args


class ToolSpec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    intro: str  # one paragraph: what the table is, one row per what
    default_fields: list[str] = Field(min_length=1)
    tie: str  # orders unsorted rows and breaks ties; usually the key
    example: ExampleSpec


class TableSpec(Strict):
    name: str
    title: str  # how every arm's system prompt names the replica
    port_offset: int = Field(ge=0, le=99)
    table: str = Field(pattern=f"^{NAME.pattern}$")  # data/<table>.parquet; question SQL names it
    source: str  # the CSV the build reads, relative to the domain folder (copied in, with provenance)
    provenance: str  # where the data comes from and its licence: DATA.md's first section
    entity: EntitySpec
    fields: list[FieldSpec] = Field(min_length=1)
    site: SiteSpec
    tool: ToolSpec

    @model_validator(mode="after")
    def names_declared_fields(self) -> TableSpec:
        """Every field the spec uses elsewhere is one of `fields`, with a kind that can serve."""
        kinds = {field.name: field.kind for field in self.fields}
        if len(kinds) != len(self.fields):
            raise ValueError("two fields have the same name")
        used = {
            "entity.key": [self.entity.key],
            "entity.within": self.entity.within,
            "site.list_fields": self.site.list_fields,
            "site.filters": self.site.filters,
            "site.group_by": self.site.group_by,
            "tool.default_fields": self.tool.default_fields,
            "tool.tie": [self.tool.tie],
        }
        for where, names in used.items():
            unknown = [name for name in names if name not in kinds]
            if unknown:
                raise ValueError(f"{where} names {', '.join(unknown)}, not a declared field")
        if len(set(self.entity.address_fields)) != len(self.entity.address_fields):
            raise ValueError("entity.within names the key or a field twice")
        if len(set(self.site.group_by)) != len(self.site.group_by):
            raise ValueError("site.group_by names a field twice")
        reserved = [name for name in kinds if name in RESERVED_FIELDS]
        if reserved:
            raise ValueError(f"no field can be named {reserved[0]} ({RESERVED_FIELDS[reserved[0]]}); rename it "
                             "(and keep the CSV header as its `column`)")
        clashing = [name for name in self.site.filters if name in LIST_PARAMS and kinds[name] in ("text", "bool")]
        if clashing:
            raise ValueError(f"site.filters: the list page cannot filter on {', '.join(clashing)} "
                             f"({', '.join(LIST_PARAMS)} are its own parameters); take them out")
        if not NAME.fullmatch(self.name):
            raise ValueError(f"name {self.name!r} must be lower-case letters, digits and _, from a letter")
        return self

    def field(self, name: str) -> FieldSpec:
        return next(field for field in self.fields if field.name == name)

    def page_path(self, values: Sequence[Any]) -> str:
        """An entity's page, each part of its address quoted: /cities/Rio%20de%20Janeiro, /features/Moon/Hall."""
        return f"{self.site.path}/" + "/".join(quote(str(value), safe="") for value in values)


def load_spec(folder: Path) -> TableSpec:
    """The folder's domain.yaml; every problem a UserError naming the file (and the field)."""
    path = folder / SPEC_FILE
    try:
        raw = yaml.safe_load(read_text(path, "domain spec"))
    except (yaml.YAMLError, ValueError, TypeError, AttributeError, RecursionError) as error:
        raise UserError(f"{path} is not valid YAML: {error}") from None
    try:
        return TableSpec.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, issue['loc'])) or 'spec'}: {issue['msg']}" for issue in error.errors()
        )
        raise UserError(f"{path}: {problems}") from None
