from armbench.models.text_tool_calls import TextToolCall, parse_tool_calls

TOOLS = ["gpu_query", "python"]


def test_qwen_tagged_call():
    text = '<tool_call>\n{"name": "gpu_query", "arguments": {"limit": 3}}\n</tool_call>'
    assert parse_tool_calls(text, TOOLS) == [TextToolCall("gpu_query", {"limit": 3})]


def test_several_tagged_calls_and_an_unclosed_last_tag():
    text = (
        '<tool_call>{"name": "python", "arguments": {"code": "print(1)"}}</tool_call>\n'
        '<tool_call>{"name": "gpu_query", "arguments": {}}'
    )
    assert [c.name for c in parse_tool_calls(text, TOOLS)] == ["python", "gpu_query"]


def test_fenced_and_bare_json_with_string_arguments():
    fenced = 'Let me look.\n```json\n{"name": "gpu_query", "arguments": "{\\"limit\\": 2}"}\n```'
    bare = 'I will call {"name": "gpu_query", "parameters": {"limit": 1}} now.'
    assert parse_tool_calls(fenced, TOOLS) == [TextToolCall("gpu_query", {"limit": 2})]
    assert parse_tool_calls(bare, TOOLS) == [TextToolCall("gpu_query", {"limit": 1})]


def test_prose_answers_and_unknown_tools_are_not_calls():
    assert parse_tool_calls("ANSWER: 352", TOOLS) == []
    assert parse_tool_calls('{"name": "web_search", "arguments": {}}', TOOLS) == []
    assert parse_tool_calls('{"name": "gpu_query", "arguments": "not json"}', TOOLS) == []
    assert parse_tool_calls('{"broken": ', TOOLS) == []
    assert parse_tool_calls("anything", []) == []
