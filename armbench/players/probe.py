"""The probe: one tiny tool with a required argument, and the prompt that asks a model to call it.

`bench doctor` offers it to check that a provider carries tool calls intact; the built-in scripts
recognise it and answer it like a question. Here, below both, so neither imports the other.
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from armbench.tools.base import Tool

PROBE_TOOL = "armbench_probe"
PROBE_PROMPT = (
    'This is a connectivity check. Call the tool {tool} with word set to exactly "{word}". '
    "When you have its result, reply with the code it returns, as: ANSWER: <code>"
)


class ProbeArgs(BaseModel):
    word: str = Field(description="The word the user asked you to send, exactly.")


class ProbeTool(Tool):
    name = PROBE_TOOL
    description = 'Records a word and returns a confirmation code. Example: {"word": "apple"}.'
    Args = ProbeArgs

    def __init__(self, code: str):
        self.code = code

    async def run(self, args: ProbeArgs) -> dict[str, Any]:
        return {"received": args.word, "code": self.code}


def probe_word(prompt: str) -> str | None:
    """The word a probe prompt asks for (scripted models use this to answer the probe)."""
    match = re.search(r'word set to exactly "([^"]*)"', prompt)
    return match.group(1) if match else None
