"""agents/base.py: combining judges' verdicts, and the gateway's metadata reaching the model."""
from __future__ import annotations

from typing import Any

from projectgen.agents import Architect, CheckStatus, ModelGateway, Verdict, combine_verdicts
from projectgen.llm import UsageRecorder
from agent_fakes import DOCS, TREE, run, scripted, tree


def verdict(judge: str, score: float, accepted: bool, **fields: Any) -> Verdict:
    return Verdict(judge=judge, stage="code", iteration=2, score=score, accepted=accepted, **fields)


def test_combine_single_verdict_is_unchanged():
    only = verdict("a", 7, True, feedback="f")
    assert combine_verdicts([only]) is only


def test_combine_needs_every_judge_to_accept_and_takes_the_lowest_score():
    check = CheckStatus(passed=1, total=2, status="failed")
    a = verdict("a", 9, True, feedback="A-FB", files={"x.py": "ax", "y.py": "ay"}, check=check, log="LOG-A")
    b = verdict("b", 4, False, feedback="B-FB", files={"x.py": "bx"}, reasons="B-R", stop=True)
    combined = combine_verdicts([a, b])
    assert not combined.accepted and combined.score == 4
    assert combined.judge == "a+b" and (combined.stage, combined.iteration) == ("code", 2)
    assert combined.files == {"x.py": "ax\nbx", "y.py": "ay"}
    assert combined.feedback == "[a] A-FB\n\n[b] B-FB" and combined.reasons == "B-R"
    assert combined.check == check and combined.log == "LOG-A" and combined.stop
    assert combined.scores == {"a": 9, "b": 4}


def test_combine_accepts_when_all_accept_and_keeps_per_judge_scores():
    combined = combine_verdicts([verdict("a", 9, True, scores={"x": 9}), verdict("b", 8, True, scores={"y": 8})])
    assert combined.accepted and combined.score == 8 and not combined.stop
    assert combined.scores == {"a.x": 9, "b.y": 8} and combined.files == {}


def test_gateway_metadata_reaches_the_model_and_picks_the_attempt():
    model = scripted({"role": "architect", "content": "garbage"},
                     {"role": "architect", "attempt": 2, "content": TREE})
    gw = ModelGateway(recorder=UsageRecorder(), metadata={"projectgen_attempt": 2})
    assert run(Architect(model).design(gw, DOCS, iteration=1)) == tree()
    assert model.calls[0]["attempt"] == 2
