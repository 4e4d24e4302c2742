"""Replays for multi-turn refinement: the reference oracle's script and per-strategy replies."""
from __future__ import annotations

import pytest

from projectgen.errors import ProjectGenError
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.scripted import load_script
from projectgen.oracles.refinement_replay import reference_turn_script, specialise_script, split_target


def test_the_reference_script_answers_each_turn_with_its_reference():
    script = reference_turn_script("t", ["a = 1\n", "a = 2"])
    assert script.label == REFERENCE_LABEL
    assert script.match("refiner", "t", 2, 0).text == "```python\na = 2\n```\n"
    assert script.match("refiner", "t", 1, 0).text == "```python\na = 1\n```\n"
    assert script.match("refiner", "other", 1, 0) is None


def test_specialising_keeps_the_most_specific_reply_per_turn():
    script = load_script({"label": "rec", "responses": [
        {"role": "refiner", "target": "t", "iteration": 1, "content": "plain 1"},
        {"role": "refiner", "target": "t", "iteration": 2, "content": "plain 2"},
        {"role": "refiner", "target": "t", "iteration": 3, "content": "plain 3"},
        {"role": "refiner", "target": "t@ce", "iteration": 2, "content": "ce 2"},
        {"role": "refiner", "target": "t@ce/basic", "iteration": 3, "content": "ce basic 3"},
        {"role": "refiner", "target": "t@ci/basic", "iteration": 2, "content": "ci 2"},
        {"role": "refiner", "target": "u", "iteration": 1, "content": "u 1"},
    ]})

    def replies(strategy, context):
        chosen = specialise_script(script, strategy, context)
        return [chosen.match("refiner", "t", k, 0).text for k in (1, 2, 3)]

    assert replies("fh", "basic") == ["plain 1", "plain 2", "plain 3"]
    assert replies("ce", "basic") == ["plain 1", "ce 2", "ce basic 3"]
    assert replies("ce", "golden") == ["plain 1", "ce 2", "plain 3"]
    assert replies("ci", "basic") == ["plain 1", "ci 2", "plain 3"]
    specialised = specialise_script(script, "ce", "golden")
    assert specialised.label == "rec (ce, golden)"
    assert {e.target for e in specialised.responses} == {"t", "u"}


def test_targets_split_into_task_strategy_and_context():
    assert split_target("t") == ("t", None, None)
    assert split_target("t@ce") == ("t", "ce", None)
    assert split_target("kvstore-cli@ce/basic") == ("kvstore-cli", "ce", "basic")
    assert split_target(None) == (None, None, None)
    with pytest.raises(ProjectGenError, match="TASK@STRATEGY"):
        split_target("@ce")
