"""The GPU question sets: their shape and the questions the study took from DeepSearchQA."""


def test_each_gpu_set_has_five_questions_with_solutions(gpu_design, gpu_heldout):
    for question_set in (gpu_design, gpu_heldout):
        assert len(question_set.questions) == 5
        for question in question_set.questions:
            assert question.solutions["tooled"].calls
            assert question.answer_format


def test_the_black_screen_question_and_the_bandwidth_tie(gpu_design):
    by_text = {q.id: q for q in gpu_design.questions}
    crash = next(q for q in by_text.values() if "black screen" in q.text)
    assert crash.answer == ["352"] and "GeForce RTX 2080 Ti" in crash.premise
    tie = next(q for q in by_text.values() if "bandwidth" in q.text and len(q.answer) == 2)
    assert sorted(tie.answer) == ["H200 NVL", "H200 SXM 141 GB"] and tie.tie_rule
