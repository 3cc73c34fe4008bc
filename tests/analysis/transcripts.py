"""A transcript of the kind the HTML must untangle: parallel calls answered out of order, code, a
traceback, per-call usage (as the agent records it now) and hostile text in a tool result."""
import json

from tests.support.run_sets import HOSTILE

PARALLEL_RUN = "gpus-design-02.tooled.r1"
CODE = "import math\nfor n in range(3):\n    print(math.factorial(n))"
TRACEBACK = 'Traceback (most recent call last):\n  File "<stdin>", line 1\nZeroDivisionError: division by zero\n'


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def result(call_id: str, name: str, content: dict) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": json.dumps(content)}


def parallel_transcript(answer: str) -> list[dict]:
    return [
        {"role": "system", "content": "You are a careful research agent."},
        {"role": "user", "content": "Which GPUs?"},
        {"role": "assistant", "content": "Two lookups at once.",
         "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "seconds": 1.5},
         "tool_calls": [call("call_py", "python", {"code": CODE}),
                        call("call_q", "gpu_query", {"filters": [{"field": "name", "op": "eq", "value": "H200"}]})]},
        # answered in the other order: each result must still sit under its own call
        result("call_q", "gpu_query", {"rows": [{"name": HOSTILE}]}),
        result("call_py", "python", {"stdout": "1\n1\n2\n", "stderr": TRACEBACK, "exit_code": 1}),
        {"role": "assistant", "content": f"ANSWER: {answer}",
         "usage": {"prompt_tokens": 1500, "completion_tokens": 9, "seconds": 0.25}},
    ]


def rewrite_transcript(store, run_id: str, messages: list[dict]) -> None:
    path = store.directory / "transcripts" / f"{run_id}.jsonl"
    path.write_text("".join(json.dumps(message) + "\n" for message in messages), encoding="utf-8")
