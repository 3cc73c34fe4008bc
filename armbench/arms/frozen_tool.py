"""A synthesized tool frozen on disk, as `bench synthesize` leaves it and `--tool-from` reads it:

    <DIR>/tool/tool.py     the module's source, as submitted
    <DIR>/tool/tool.json   {"name", "description", "parameters", "domain", "sha256"}
    <DIR>/synthesis.json   the record of the episode that froze it (engine/synthesis.py writes it)

Loading re-derives the hash from the files, so a tool edited after it was frozen is refused
rather than run under the hash of another.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from armbench.errors import UserError, read_json_object, read_text
from armbench.tools.synthesized import ToolSpec
from armbench.types import SynthesisRecord

TOOL_DIR = "tool"
SYNTHESIS_FILE = "synthesis.json"
SOURCE_FILE = "tool.py"
SPEC_FILE = "tool.json"


@dataclass(frozen=True)
class FrozenTool:
    spec: ToolSpec
    domain: str
    folder: Path  # the synthesis folder (<DIR>), which holds tool/ and the episode's record

    @property
    def source_path(self) -> Path:
        return self.folder / TOOL_DIR / SOURCE_FILE

    def manifest_entry(self) -> dict[str, str]:
        """How a run set's manifest names it: the hash decides; the paths say where to read it."""
        return {"name": self.spec.name, "sha256": self.spec.sha256, "source": str(self.source_path),
                "synthesis": str(self.folder)}


def freeze(spec: ToolSpec, domain: str, folder: Path) -> FrozenTool:
    tool_dir = folder / TOOL_DIR
    tool_dir.mkdir(parents=True, exist_ok=True)
    (tool_dir / SOURCE_FILE).write_text(spec.source, encoding="utf-8")
    meta = {"name": spec.name, "description": spec.description, "parameters": spec.parameters,
            "domain": domain, "sha256": spec.sha256}
    (tool_dir / SPEC_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return FrozenTool(spec, domain, folder)


def load_frozen_tool(folder: Path) -> FrozenTool:
    """The tool `bench synthesize --out FOLDER` froze; a UserError naming what is wrong otherwise."""
    spec_path = folder / TOOL_DIR / SPEC_FILE
    try:
        found = spec_path.is_file()
    except OSError as error:  # a name too long for the file system
        raise UserError(f"--tool-from {str(folder)[:200]}: {error.strerror}") from None
    if not found:
        raise UserError(f"--tool-from {folder}: no frozen tool there (no {TOOL_DIR}/{SPEC_FILE}); "
                        "make one with `bench synthesize --out FOLDER`, or check the synthesis did submit a tool")
    meta = read_json_object(spec_path, "frozen tool spec")
    source = read_text(folder / TOOL_DIR / SOURCE_FILE, "frozen tool source")
    texts = ("name", "description", "domain", "sha256")
    wrong = [field for field in texts if not isinstance(meta.get(field), str)]
    if wrong or not isinstance(meta.get("parameters"), dict):
        raise UserError(f"frozen tool spec {spec_path} needs {', '.join(texts)} as text and parameters as an "
                        f"object; it has {', '.join(wrong) or 'parameters'} otherwise")
    spec = ToolSpec(meta["name"], meta["description"], meta["parameters"], source)
    problems = spec.problems()
    if problems:
        raise UserError(f"frozen tool {spec_path}: {problems[0]}")
    if spec.sha256 != meta["sha256"]:
        raise UserError(f"frozen tool {folder / TOOL_DIR} was changed after it was frozen: its files hash to "
                        f"{spec.sha256[:12]}, its spec says {str(meta['sha256'])[:12]}; synthesize it again")
    return FrozenTool(spec, meta["domain"], folder)


def read_synthesis(folder: Path) -> SynthesisRecord | None:
    """The record of the episode that froze the tool in `folder` (None when there is none, e.g. a
    tool frozen by hand)."""
    path = folder / SYNTHESIS_FILE
    if not path.is_file():
        return None
    try:
        return SynthesisRecord.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as error:
        raise UserError(f"synthesis record {path} cannot be read: {str(error)[:200]}") from None


def load_frozen_tools(folders: list[str] | tuple[str, ...]) -> dict[str, FrozenTool]:
    """`--tool-from`'s folders as domain -> its frozen tool; two for one domain are refused."""
    tools: dict[str, FrozenTool] = {}
    for folder in folders:
        frozen = load_frozen_tool(Path(folder))
        if frozen.domain in tools:
            raise UserError(f"--tool-from gives two tools for {frozen.domain}: {tools[frozen.domain].folder} and "
                            f"{folder}; give one per domain")
        tools[frozen.domain] = frozen
    return tools
