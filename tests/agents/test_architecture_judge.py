"""The ArchitectureJudge (agents/architecture_judge.py): scores, the threshold and unreadable reviews."""
from __future__ import annotations

import json
from typing import Any

import pytest

from projectgen.agents import ArchitectureJudge, ModelGateway, Verdict
from projectgen.agents.architect import ssat_json
from agent_fakes import DOCS, PromptModel, gateway, only_record, review, run, scripted, tree


def judge_architecture(content: Any, threshold: float = 7.0, iteration: int = 1) -> tuple[Verdict, ModelGateway]:
    gw = gateway()
    model = scripted({"role": "architecture_judge", "content": content})
    verdict = run(ArchitectureJudge(model).review(gw, DOCS, tree(), iteration=iteration, threshold=threshold))
    return verdict, gw


def test_architecture_judge_accepts_at_or_above_threshold():
    verdict, gw = judge_architecture(review(overall=8), threshold=7)
    assert verdict.accepted and verdict.score == 8
    assert (verdict.judge, verdict.stage, verdict.iteration) == ("architecture_judge", "architecture", 1)
    assert verdict.feedback == "FEEDBACK" and verdict.reasons == "REASONS"
    assert verdict.scores["document_consistency"] == 8
    record = only_record(gw)
    assert (record.role, record.stage) == ("architecture_judge", "architecture")
    assert judge_architecture(review(overall=7), threshold=7)[0].accepted


def test_architecture_judge_rejects_below_threshold():
    verdict, _ = judge_architecture(review(overall=6.5), threshold=7)
    assert not verdict.accepted and verdict.score == 6.5
    assert verdict.feedback == "FEEDBACK"


def test_architecture_judge_without_overall_uses_the_mean_of_the_scores():
    verdict, _ = judge_architecture(review(), threshold=8.5)  # mean of 9, 8, 9, 8
    assert verdict.score == 8.5 and verdict.accepted
    verdict, _ = judge_architecture(review(scores={"requirement_coverage": 6, "dependency_relations": 8}),
                                    threshold=7.5)
    assert verdict.score == 7 and not verdict.accepted


def test_architecture_judge_clamps_scores_and_an_empty_review_scores_zero():
    verdict, _ = judge_architecture(review(overall=85, scores={"requirement_coverage": -3}), threshold=7)
    assert verdict.score == 10 and verdict.scores == {"requirement_coverage": 0}
    verdict, _ = judge_architecture({}, threshold=1)
    assert verdict.score == 0 and not verdict.accepted


@pytest.mark.parametrize("reply", ["I think it looks great, 9/10!", '{"scores": "high", "overall": "x"}'])
def test_architecture_judge_unreadable_reply_scores_zero_with_feedback(reply):
    verdict, _ = judge_architecture(reply, threshold=0)
    assert verdict.score == 0 and not verdict.accepted
    assert "could not be read" in verdict.feedback


def test_architecture_judge_prompt_holds_documents_and_the_tree():
    model = PromptModel(answer=json.dumps(review(overall=9)))
    ssat = tree()
    run(ArchitectureJudge(model).review(gateway(), DOCS, ssat, iteration=3, threshold=7))
    assert "PRD-MARKER" in model.prompts[0] and ssat_json(ssat) in model.prompts[0]
    assert model.call_metadata[0]["projectgen_iteration"] == 3
