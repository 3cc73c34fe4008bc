"""The model's turn on the wire: what the run loop sends back to the model, and a recording stores."""
from __future__ import annotations

from typing import Any


def assistant_message(content: str | None, tool_calls: list[Any]) -> dict[str, Any]:
    """The assistant message for a reply's text and tool calls (as LiteLLM returned them)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in tool_calls
        ]
    return message
