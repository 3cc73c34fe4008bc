"""The HTML pages' content without a browser: calls paired with their results, code as code, per-call
usage, replayed times labelled, and model or tool text always escaped."""
import copy
import json
from types import SimpleNamespace

from armbench.analysis.html import render_question, render_transcript
from armbench.analysis.publish import write_report
from armbench.analysis.screenshots import showcase
from armbench.analysis.transcript import Block, blocks, read_turns, steps, to_turn
from armbench.engine.agent import run_episode
from armbench.tools.base import ArmTools
from tests.analysis.transcripts import CODE, PARALLEL_RUN, TRACEBACK, parallel_transcript, rewrite_transcript
from tests.support.run_sets import make_record


def test_parallel_results_are_paired_with_their_calls_by_id():
    turns = [to_turn(message) for message in parallel_transcript("x")]
    paired = steps(turns)
    assert [step.turn.role for step in paired] == ["system", "user", "assistant", "assistant"]
    calls, results = paired[2].turn.calls, paired[2].results
    assert [c.id for c in calls] == ["call_py", "call_q"] and [r.call_id for r in results] == ["call_py", "call_q"]
    assert paired[2].turn.usage.prompt_tokens == 1234 and paired[2].turn.usage.seconds == 1.5


def test_results_without_ids_pair_in_order_and_extra_ones_stand_alone():
    messages = parallel_transcript("x")[:5]
    for message in messages[3:]:
        del message["tool_call_id"]
    messages.append({"role": "tool", "name": "python", "content": "late"})
    paired = steps([to_turn(message) for message in messages])
    assert [r.tool for r in paired[2].results] == ["gpu_query", "python"]  # in the order they came
    assert paired[3].turn.text == "late" and paired[3].results == ()


def test_a_call_the_run_never_answered_has_no_result():
    paired = steps([to_turn(message) for message in parallel_transcript("x")[:4]])
    assert paired[-1].results[0] is None and paired[-1].results[1].call_id == "call_q"


def test_code_and_output_are_blocks_of_their_own():
    assert blocks(json.dumps({"code": CODE})) == [Block("code", CODE)]
    parts = blocks(json.dumps({"stdout": "1\n2\n", "stderr": TRACEBACK, "exit_code": 1}))
    assert parts[0] == Block(None, '{\n  "exit_code": 1\n}')
    assert parts[1:] == [Block("stdout", "1\n2\n"), Block("stderr", TRACEBACK)]
    assert blocks("not json <b>") == [Block(None, "not json <b>")]
    assert blocks('{"url": "http://x/"}') == [Block(None, '{\n  "url": "http://x/"\n}')]


def test_question_page_shows_code_as_code_and_escapes_tool_text(two_arm_run_set):
    store = two_arm_run_set
    rewrite_transcript(store, PARALLEL_RUN, parallel_transcript("H200 NVL | H200 SXM 141 GB"))
    write_report(store)
    page = (store.directory / "questions" / "gpus-design-02.html").read_text()
    assert "<pre><code>import math\nfor n in range(3):\n    print(math.factorial(n))</code></pre>" in page
    assert "ZeroDivisionError: division by zero" in page and "\\n" not in page.split("call_py", 1)[1][:800]
    assert "&lt;script&gt;alert(" in page and "<script" not in page and "<b>bold" not in page
    # each call, then its own result, though the results came back in the other order
    order = [page.index(marker) for marker in ('class="call" data-call-id="call_py"', 'class="result" data-call-id="call_py"',
                                               'class="call" data-call-id="call_q"', 'class="result" data-call-id="call_q"')]
    assert order == sorted(order)
    assert "1,234 tokens in · 56 out · 1.50 s" in page
    assert page.count('<section class="arm"') == 2 and page.count('<article class="run"') == 6
    transcript = (store.directory / "transcripts" / f"{PARALLEL_RUN}.html").read_text()
    assert transcript.index('class="result" data-call-id="call_py"') < transcript.index('class="call" data-call-id="call_q"')
    report = (store.directory / "report.html").read_text()
    assert 'href="questions/gpus-design-02.html#gpus-design-02.tooled.r1"' in report


def test_a_replayed_run_labels_its_times(two_arm_run_set):
    store = two_arm_run_set
    record = next(r for r in store.records() if r.run_id == PARALLEL_RUN)
    replay = record.model_copy(update={"model": "replay/results/recordings/x", "wall_seconds": 0.003})
    turns = [to_turn(message) for message in parallel_transcript("x")]
    transcript = render_transcript(replay, turns, None)
    assert "0.00 s wall (1.50 model, 0.50 tools) in the replay: the model&#39;s turns were read from the recording" in transcript
    assert "replayed (no model latency)" in transcript and "1.50 s" not in transcript.split("Transcript")[1]
    question = render_question([(replay, turns)], None)
    assert "in the replay</abbr>" in question


def test_a_transcript_from_before_per_call_usage_still_renders(two_arm_run_set):
    record = next(r for r in two_arm_run_set.records() if r.run_id == "gpus-design-01.browsing.r0")
    turns = read_turns(two_arm_run_set.directory, record)
    assert all(turn.usage is None for turn in turns)
    page = render_question([(record, turns), (make_record(question_id="gpus-design-01", run_id="lost"), None)], None)
    assert "tokens in ·" not in page and "the transcript could not be read" in page


class TwoTurns:
    """A model that makes two parallel calls to a tool the arm lacks, then answers."""

    def __init__(self):
        self.sent = []

    async def complete(self, messages, tools, tool_choice=None):
        self.sent.append(copy.deepcopy(messages))
        calls = [SimpleNamespace(id=f"c{n}", function=SimpleNamespace(name="nope", arguments="{}")) for n in (1, 2)]
        message = SimpleNamespace(content="ANSWER: 1" if len(self.sent) > 1 else None,
                                  tool_calls=None if len(self.sent) > 1 else calls)
        usage = SimpleNamespace(prompt_tokens=100 * len(self.sent), completion_tokens=7)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage), 0


async def test_the_agent_records_each_calls_usage_in_the_transcript_only(gpu_design):
    model = TwoTurns()
    episode = await run_episode(gpu_design.questions[0], ArmTools("tooled"), model)
    assistant = [m for m in episode.transcript if m["role"] == "assistant"]
    assert [(m["usage"]["prompt_tokens"], m["usage"]["completion_tokens"]) for m in assistant] == [(100, 7), (200, 7)]
    assert all(m["usage"]["seconds"] >= 0 for m in assistant)
    assert all("usage" not in m for sent in model.sent for m in sent)  # never sent to the provider


def test_the_screenshot_shows_a_question_the_arms_disagree_on_else_the_busiest():
    agree = [make_record(question_id=q, arm=arm, actions=actions) for q, actions in (("a", 1), ("b", 9))
             for arm in ("browsing", "tooled")]
    assert showcase(agree) == "b"
    disagree = [make_record(question_id="c", arm="browsing", correct=False), make_record(question_id="c")]
    assert showcase(agree + disagree) == "c"


def test_a_replayed_run_with_its_recorded_model_time_says_so(two_arm_run_set):
    record = next(r for r in two_arm_run_set.records() if r.run_id == PARALLEL_RUN)
    replay = record.model_copy(update={"model": "replay/results/recordings/x", "replayed_times": True})
    transcript = render_transcript(replay, [to_turn(message) for message in parallel_transcript("x")], None)
    assert "2.00 s wall (1.50 model, as recorded; 0.50 tools, in the replay)" in transcript
    assert "in the replay</abbr>" not in render_question([(replay, [])], None)
