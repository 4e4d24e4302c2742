"""The experiment's pages say what each arm ran, as its runs recorded it, and an oracle says it is one wherever
its figures appear: a header once said "attempts: 4, selection: check" for direct-only runs that selected by
the hidden unit tests, and printed an oracle's "token reduction 100.00%" beside the paper's 42-54%."""
from __future__ import annotations

from projectgen.config import AttemptSettings, Settings, fidelity_settings
from projectgen.experiments.figures import PairResult
from projectgen.experiments.results import FinalFigures, ModelReport
from projectgen.experiments.tables import arm_settings, final_lines


def report(spec: str, method: str, pairs: list[PairResult]) -> ModelReport:
    return ModelReport(method=method, model="m" if spec != "reference" else "reference", spec=spec, attempts=4,
                       per_attempt=[], pairs=pairs,
                       final=FinalFigures(tasks=len(pairs), errors=0, token_reduction_pct=100.0,
                                          cost_reduction_pct=50.0))


def pair(task: str, *, attempts: int | None, selection: str | None, profile: str | None,
         status: str = "finished", feedback: str | None = "check",
         recorded: dict[str, object] | None = None) -> PairResult:
    return PairResult(key=task, model="m", spec="x", task_id=task, status=status, attempts_planned=attempts,
                      selection=selection, profile=profile, feedback_suite=feedback,
                      fidelity_settings=recorded or {})


def test_an_arm_shows_the_attempts_and_selection_its_runs_recorded_not_the_experiments() -> None:
    direct = report("openai:gpt-4o", "direct", [pair("a", attempts=1, selection="unit", profile="paper"),
                                               pair("b", attempts=1, selection="unit", profile="paper")])
    assert arm_settings(direct) == ("attempts 1, selection unit (oracle: the hidden unit tests chose the output), "
                                    "feedback check, profile paper")
    ralbench = report("openai:gpt-4o", "self-reflection", [pair("a", attempts=1, selection="unit", profile="paper",
                                                               feedback="unit")])
    assert ("feedback unit (the hidden unit tests' output was given to the generators), profile paper"
            in arm_settings(ralbench))


def test_an_arm_whose_runs_differ_shows_every_value_and_an_old_ledger_says_not_recorded() -> None:
    mixed = report("openai:gpt-4o", "livecoder", [pair("a", attempts=4, selection="check", profile="projectgen"),
                                                  pair("b", attempts=4, selection="unit", profile="projectgen"),
                                                  pair("c", attempts=9, selection="unit", profile=None,
                                                       status="error")])
    assert arm_settings(mixed).startswith("attempts 4, selection check/unit (oracle")
    old = report("openai:gpt-4o", "livecoder", [pair("a", attempts=None, selection=None, profile=None,
                                                     feedback=None)])
    assert arm_settings(old) == ("attempts not recorded, selection not recorded, feedback not recorded, "
                                 "profile not recorded")


def test_the_oracle_is_labelled_and_gets_no_reduction_figure() -> None:
    oracle = report("reference", "direct", [pair("a", attempts=1, selection="check", profile="projectgen")])
    model = report("openai:gpt-4o", "direct", [pair("a", attempts=1, selection="check", profile="projectgen")])
    assert oracle.name == "direct / reference (oracle)" and oracle.column == "direct / reference (oracle)"
    assert model.name == "direct / m" and "oracle" not in arm_settings(model)
    assert arm_settings(oracle).endswith("oracle: each task's reference replayed, not a model")
    oracle_text, model_text = "\n".join(final_lines(oracle)), "\n".join(final_lines(model))
    assert "reduction" not in oracle_text and "oracle" in oracle_text
    assert "token reduction attempt 1 -> 4: 100.00%" in model_text and "cost reduction" in model_text


def test_an_arm_names_every_fidelity_setting_its_runs_recorded() -> None:
    """results.json's top-level settings are what the experiment asked; a published task's paper profile changes
    JudgeA, JudgeS, the stage memory...: the arm line says what ran, as docs/fidelity.md names it."""
    paper = fidelity_settings(Settings(profile="paper").model_dump(), AttemptSettings(profile="paper").model_dump())
    mine = fidelity_settings(Settings().model_dump(), AttemptSettings().model_dump())
    arm = report("openai:gpt-4o", "livecoder", [pair("a", attempts=4, selection="unit", profile="paper",
                                                     recorded=paper),
                                                pair("b", attempts=4, selection="check", profile="projectgen",
                                                     recorded=mine)])
    line = arm_settings(arm)
    for named in ("architecture_criteria paper/projectgen", "skeleton_review exact/paper",
                  "stage_memory distilled/raw", "carry_reflections False/True", "knowledge_after_last False/True",
                  "threshold 8.0", "gamma 2", "code_iterations 5", "skeleton_threshold_rule at_least"):
        assert named in line
    # a pair without the record (an older ledger, an external system) adds nothing rather than a guess
    assert "stage_memory" not in arm_settings(report("openai:gpt-4o", "direct", [
        pair("a", attempts=1, selection="check", profile="projectgen")]))
