"""The commands a docs page shows: every command line of its shell blocks (```sh, ```bash,
```console), as tests/test_docs.py runs them and the own-table walkthrough follows them."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

SHELL_BLOCK = re.compile(r"^```(sh|bash|console)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Command:
    page: str
    text: str
    exit_code: int

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)


def split_comment(line: str) -> tuple[str, str]:
    """The command and its `# comment` (a `#` outside quotes, at the start or after a space)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].strip(), line[index + 1:].strip()
    return line.strip(), ""


def page_commands(page: Path) -> list[Command]:
    """The page's command lines in order: continuations joined, prompts and comments stripped; in a
    console block only the `$ ` lines are commands (the rest is their output)."""
    commands = []
    for language, body in SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
        for line in re.sub(r"\\\n\s*", "", body).splitlines():
            if language == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            text, comment = split_comment(line)
            if text:
                said = re.search(r"\bexits (\d+)", comment)
                commands.append(Command(page.name, text, int(said.group(1)) if said else 0))
    return commands
