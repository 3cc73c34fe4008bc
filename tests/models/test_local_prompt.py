"""The small-model description rule drops worked examples and nothing a call needs."""
from __future__ import annotations

import pytest

from armbench.domains import DOMAINS
from armbench.models.local_prompt import PARAGRAPH_BREAK, compact_tools, without_examples
from armbench.tools.browser_tools import BROWSER_TOOLS
from armbench.tools.web_tools import HttpGetTool, PythonTool


def offered_tools() -> list[dict]:
    typed = [cls().schema() for domain in DOMAINS.values() for cls in domain.tool_classes()]
    return typed + [cls(None).schema() for cls in BROWSER_TOOLS] + [PythonTool().schema(), HttpGetTool(["http://127.0.0.1:8301"]).schema()]


@pytest.mark.parametrize("tool", offered_tools(), ids=lambda tool: tool["function"]["name"])
def test_only_examples_go_and_every_field_and_op_stays_in_the_schema(tool):
    """What the model sees of a tool is its name, description and schema: the schema (every field,
    op and limit, with its own description) is untouched, and of the description only paragraphs
    that start with "Example" go."""
    full = tool["function"]["description"]
    [compact] = compact_tools([tool])
    short = compact["function"]["description"]
    assert compact["function"]["name"] == tool["function"]["name"]
    assert compact["function"]["parameters"] == tool["function"]["parameters"]
    kept = PARAGRAPH_BREAK.split(short)
    dropped = [p for p in PARAGRAPH_BREAK.split(full) if p not in kept]
    assert dropped and all(p.lstrip().startswith("Example") for p in dropped)
    assert "Example" not in short and len(short) < len(full)


def test_only_paragraphs_that_start_with_example_go():
    text = "Query rows.\n\nFields: a, b.\n\nExample: {\"a\": 1}\n-> rows\n\nLimits: 200 rows.\n\nExample, for b:\ncode"
    assert without_examples(text) == "Query rows.\n\nFields: a, b.\n\nLimits: 200 rows."
