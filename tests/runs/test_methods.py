"""Every method runs through the durable run path on the bundled kvstore example and reaches full marks
with the reference replay; run.json and summary.json name the method; a resume keeps it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.llm import ModelRoles
from projectgen.runs import Run, RunParts
from projectgen.runs import RunRequest
from projectgen.config import AttemptSettings
from projectgen.errors import ProjectGenError
from projectgen.llm import ScriptedChatModel
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.oracles.reference_replay import reference_model, reference_script
from projectgen.runs import METHODS, RunManifest, describe_method, method_attempt_settings, Run, RunParts
from projectgen.runs.trace import read_trace

JUDGES = {"architecture_judge", "skeleton_judge", "code_judge"}


def test_the_methods_are_the_issues_arms_in_order() -> None:
    assert METHODS == ("direct", "self-reflection", "projectgen-no-iter", "projectgen", "livecoder",
                       "livecoder-no-success", "livecoder-no-failure", "livecoder-no-best")
    assert all(describe_method(name).label for name in METHODS)
    with pytest.raises(ProjectGenError, match="unknown method 'nope'"):
        describe_method("nope")


@pytest.mark.parametrize("name, switch", [("livecoder-no-success", "success_knowledge"),
                                          ("livecoder-no-failure", "failure_knowledge"),
                                          ("livecoder-no-best", "historical_best")])
def test_an_ablation_sets_its_switch_and_keeps_it_off(name: str, switch: str) -> None:
    settings = method_attempt_settings(name)
    assert getattr(settings, switch) is False and settings.attempts == 4
    others = {"success_knowledge", "failure_knowledge", "historical_best"} - {switch}
    assert all(getattr(settings, other) for other in others)
    assert getattr(method_attempt_settings(name, AttemptSettings(**{switch: True})), switch) is False


@pytest.mark.parametrize("name", ["direct", "self-reflection", "projectgen-no-iter", "projectgen"])
def test_a_baseline_is_one_attempt_without_knowledge_unless_told_otherwise(name: str) -> None:
    settings = method_attempt_settings(name)
    assert (settings.attempts, settings.success_knowledge, settings.failure_knowledge) == (1, False, False)
    assert method_attempt_settings(name, AttemptSettings(attempts=3)).attempts == 3
    assert method_attempt_settings(name, AttemptSettings()).attempts == 1  # defaults given are not "told"


def test_livecoder_is_todays_default() -> None:
    assert method_attempt_settings("livecoder") == AttemptSettings()


def test_a_baseline_without_a_design_cannot_warm_start() -> None:
    with pytest.raises(ProjectGenError, match="leave out --warm-start"):
        method_attempt_settings("direct", AttemptSettings(warm_start=True))


@pytest.mark.parametrize("name", METHODS)
def test_every_method_reaches_full_marks_with_the_reference_replay(name: str, task, runner, tmp_path: Path) -> None:
    model = reference_model(task)
    out = tmp_path / name
    outcome = Run.open(RunRequest.for_task(task, models={"default": "reference"}, method=name), out, RunParts(models=ModelRoles(model), runner=runner)).run()
    assert (outcome.unit_report.passed, outcome.unit_report.total) == (29, 29)
    manifest = json.loads((out / "run.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert manifest["method"] == summary["method"] == name
    assert manifest["model_label"] == REFERENCE_LABEL
    assert set(summary["model_descriptions"].values()) == {REFERENCE_LABEL}
    roles = [c["role"] for c in model.calls]
    method = describe_method(name)
    assert set(roles) - {"knowledge"} <= set(method.roles)
    if method.graph == "direct" or method.graph == "self-reflection":
        assert roles == ["direct"]  # the reference passes the check tests: no reflection round
    if method.graph == "project-no-judges":
        assert not JUDGES & set(roles)
    if method.settings.get("attempts") == 1:
        assert summary["attempts_run"] == 1 and "knowledge" not in roles
    else:
        assert "knowledge" in roles and "knowledge" in summary["model_descriptions"]
    settings = summary["attempt_settings"]
    for key, value in method.settings.items():
        assert settings[key] == value
    start = read_trace(out / "events.jsonl")[0]
    assert start["method"] == name and REFERENCE_LABEL in start["models"].values()


def test_a_resume_keeps_the_method(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"label": "failing", "responses": [{"role": "coder", "content": "x"}]}))
    from projectgen.llm import MODEL_FAILURES

    with pytest.raises(MODEL_FAILURES):  # the direct call has no reply: the run fails and can be resumed
        Run.open(RunRequest.for_task(task, method="direct"), out, RunParts(models=ModelRoles(ScriptedChatModel.from_file(script)), runner=runner)).run()
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
    fixed = ScriptedChatModel.from_responses(reference_script(task).model_dump(mode="json", exclude_none=True))
    outcome = Run.resume(out, RunParts(models=ModelRoles(fixed), runner=runner)).run()
    assert outcome.summary["method"] == "direct" and outcome.summary["attempts_run"] == 1
    assert [c["role"] for c in fixed.calls] == ["direct"]
    assert outcome.unit_report.passed == outcome.unit_report.total == 29


def test_a_run_json_from_before_methods_reads_as_livecoder() -> None:
    manifest = RunManifest.model_validate({"run_id": "r", "task_path": "t", "task_id": "t"})
    assert manifest.method == "livecoder" and manifest.model_label is None
