"""A run paused for review from Python: `Run.open(...)` of a request with review stops awaiting review, and
`review_run(DIR, ...)` continues it in the same folder, with the models rebuilt from run.json."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.llm import ModelRoles
from projectgen.runs import RunRequest
from projectgen.agents import Architect
from projectgen.config import AttemptSettings
from projectgen.datasets.examples import example_script_path
from projectgen.errors import ProjectGenError
from projectgen.graphs import architecture_stage
from projectgen.llm import ScriptedChatModel
from projectgen.runs import RunFolder, read_pending_review, review_run, Run, RunParts

DEMO_SCRIPT = example_script_path("kvstore.demo")
ONE = AttemptSettings(attempts=1, measure_unit_tests=False)


def start(task, out: Path, runner, *, review=(), method: str = "livecoder"):
    request = RunRequest.for_task(task, method=method, models={"default": f"scripted:{DEMO_SCRIPT}"},
                                  attempt_settings=ONE, review=review)
    return Run.open(request, out, RunParts(models=ModelRoles(ScriptedChatModel.from_file(DEMO_SCRIPT)), runner=runner)).run()


def test_a_paused_run_is_continued_by_review_run_with_models_from_run_json(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    outcome = start(task, out, runner, review=["architecture"])
    assert outcome.review is not None and outcome.summary == {}
    assert (outcome.review["stage"], outcome.review["iteration"]) == ("architecture", 2)
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "awaiting-review" and manifest["review"] == ["architecture"]
    assert read_pending_review(RunFolder(out))["interrupt_id"] == outcome.review["interrupt_id"]
    again = review_run(out, reject="Say in the tree which storage is the default", runner=runner)
    assert again.review is not None and again.review["iteration"] == 3
    done = review_run(out, approve=True, runner=runner)
    assert done.review is None and done.summary["final"]["score"] == 1.0
    assert done.summary["attempts"][0]["stages"]["architecture"]["reviews"] == ["reject", "approve"]
    assert read_pending_review(RunFolder(out)) is None and json.loads((out / "run.json").read_text())["status"] == "finished"
    with pytest.raises(ProjectGenError, match="no review is pending .the run is finished."):
        review_run(out, approve=True)


def test_review_options_that_cannot_work_are_refused(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = ScriptedChatModel.from_file(DEMO_SCRIPT)
    with pytest.raises(ProjectGenError, match="build your own stages with review=True"):
        Run.open(RunRequest.for_task(task, review=["architecture"]), out, RunParts(models=ModelRoles(model), stages=[("architecture", architecture_stage(Architect(model), []))])).run()
    with pytest.raises(ProjectGenError, match="method self-reflection has no architecture or skeleton stage"):
        start(task, out, runner, method="self-reflection", review=["architecture", "skeleton"])
    assert not out.exists()
    start(task, out, runner, review=["skeleton"])
    with pytest.raises(ProjectGenError, match="give one decision"):
        review_run(out, approve=True, reject="and no")
    with pytest.raises(ProjectGenError, match="a skeleton edit is a JSON object of path -> file text"):
        review_run(out, edit={"project_name": "kvstore", "files": []})
    plain = tmp_path / "plain"
    start(task, plain, runner)
    with pytest.raises(ProjectGenError, match="the run reviews no stage"):
        review_run(plain, approve=True)
