"""Bodies as the real API writes them: compact JSON, or XML in the `wb:` namespace with a BOM.

A v2 list is `[paging, records]` in JSON and `<wb:{root} paging-attributes><wb:{item}>...` in
XML; one generic XML writer covers every resource: an item's `id` (and for flat items such as an
income level, every key but `value`) become attributes; a nested object becomes an element whose
`value` is its text and whose other keys are attributes; a list becomes a wrapper of singulars.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

JSON_TYPE = "application/json;charset=utf-8"
XML_TYPE = "application/xml;charset=utf-8"
XML_HEAD = '\ufeff<?xml version="1.0" encoding="utf-8"?>'
NAMESPACE = 'xmlns:wb="http://www.worldbank.org"'

MESSAGES = {
    "invalid": ("120", "Invalid value", "The provided parameter value is not valid"),
    "language": (
        "150",
        "Language is not yet supported in the API",
        "Response requested in an unsupported language.",
    ),
}


@dataclass(frozen=True)
class XmlShape:
    root: str
    item: str
    attributes: tuple[str, ...] = ("id",)


def number(value: float | None) -> float | int | None:
    """Integral values are written without a fraction (331501080, not 331501080.0)."""
    if value is not None and float(value).is_integer():
        return int(value)
    return value


def json_body(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return escape(str(value))


def attributes(pairs: dict[str, Any]) -> str:
    return "".join(f" {key}={quoteattr('' if v is None else str(v))}" for key, v in pairs.items())


def element(name: str, value: Any) -> str:
    if isinstance(value, dict):
        attrs = attributes({k: v for k, v in value.items() if k != "value"})
        return tagged(name, attrs, text(value.get("value")))
    if isinstance(value, list):
        child = name[:-1] if name.endswith("s") else name
        return tagged(name, "", "".join(element(child, item) for item in value))
    return tagged(name, "", text(value))


def tagged(name: str, attrs: str, inner: str) -> str:
    if inner == "":
        return f"<wb:{name}{attrs} />"
    return f"<wb:{name}{attrs}>{inner}</wb:{name}>"


def xml_item(shape: XmlShape, record: dict[str, Any]) -> str:
    keys = [key for key in record if key not in shape.attributes]
    if keys == ["value"]:
        return element(shape.item, record)
    attrs = attributes({key: record[key] for key in shape.attributes if key in record})
    return tagged(shape.item, attrs, "".join(element(key, record[key]) for key in keys))


def xml_list(shape: XmlShape, paging: dict[str, Any], records: list[dict[str, Any]] | None) -> str:
    head = f"<wb:{shape.root} {NAMESPACE}{attributes(paging)}"
    if not records:
        return f"{XML_HEAD}\n{head} />"
    items = "\n".join(f"  {xml_item(shape, record)}" for record in records)
    return f"{XML_HEAD}\n{head}>\n{items}\n</wb:{shape.root}>"


def v2_list(fmt: str, shape: XmlShape, paging: dict[str, Any],
            records: list[dict[str, Any]] | None) -> str:
    if fmt == "json":
        return json_body([paging, records])
    return xml_list(shape, paging, records)


def message_body(fmt: str, kind: str) -> str:
    message_id, key, value = MESSAGES[kind]
    if fmt == "json":
        return json_body([{"message": [{"id": message_id, "key": key, "value": value}]}])
    message = tagged("message", attributes({"id": message_id, "key": key}), escape(value))
    return f"{XML_HEAD}\n<wb:error {NAMESPACE}>\n  {message}\n</wb:error>"


def media_type(fmt: str) -> str:
    return JSON_TYPE if fmt == "json" else XML_TYPE
