"""The Tool protocol's guarantees, independent of any one tool."""
from typing import Any

from pydantic import BaseModel

from armbench.tools.base import ArmTools, Tool, ToolError


class EchoArgs(BaseModel):
    size: int = 1
    fail: str | None = None


class Echo(Tool):
    name = "echo"
    description = "Echo `size` characters."
    Args = EchoArgs

    async def run(self, args: EchoArgs) -> dict[str, Any]:
        if args.fail == "tool_error":
            raise ToolError("bad_size", "size is odd", valid_choices=[2, 4])
        if args.fail == "bug":
            raise RuntimeError("boom")
        return {"text": "x" * args.size}


async def test_a_result_is_returned_as_is():
    outcome = await Echo().invoke('{"size": 3}')
    assert outcome == outcome.__class__({"text": "xxx"}, is_error=False)


async def test_every_failure_becomes_a_structured_error():
    cases = {
        "invalid_json": '{"size": ',
        "invalid_arguments": {"size": "big"},
        "bad_size": {"fail": "tool_error"},
        "tool_failure": {"fail": "bug"},
        "result_too_large": {"size": 70_000},
    }
    for kind, arguments in cases.items():
        outcome = await Echo().invoke(arguments)
        assert outcome.is_error, kind
        assert outcome.result["error"]["type"] == kind
    assert (await Echo().invoke({"fail": "tool_error"})).result["error"]["valid_choices"] == [2, 4]


async def test_missing_arguments_mean_defaults():
    assert (await Echo().invoke(None)).result == {"text": "x"}
    assert (await Echo().invoke("")).result == {"text": "x"}


def test_the_manifest_hash_changes_with_a_description():
    class Reworded(Echo):
        description = "Echo `size` characters, reworded."

    assert ArmTools("a", [Echo()]).manifest_hash() != ArmTools("a", [Reworded()]).manifest_hash()
    assert ArmTools("a", [Echo()]).manifest_hash() == ArmTools("b", [Echo()]).manifest_hash()
