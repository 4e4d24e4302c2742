"""`projectgen refine`'s batch: the bundled tasks end to end in the sandbox (the issue's "done when"), and the
ledger, resume, error rows and budgets with a fake runner."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from projectgen.datasets.multiturn import TURN_SUITE, bundled_dataset_dir, load_multiturn_task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.experiments.executors import LocalExecutor
from projectgen.experiments.ledger import Ledger
from projectgen.protocols.definition import Hooks
from projectgen.protocols.refinement.batch import RefinementSpec, resolve_model, run_refinement
from projectgen.runs.run_log import read_run_log

from test_support import write_multiturn_task


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> tuple[Path, object]:
    """The reference oracle and the bundled replay over every bundled task, strategy and context, in the sandbox."""
    out = tmp_path_factory.mktemp("refine")
    spec = RefinementSpec(dataset=bundled_dataset_dir(),
                          models=(resolve_model("reference"), resolve_model("scripted:examples")))
    return out, run_refinement(spec, out, executor=LocalExecutor(workers=2))  # two workers: also the parallel path


def entry(results, model: str, strategy: str, context: str):
    return next(e for e in results.summary if (e.model, e.strategy, e.context) == (model, strategy, context))


def test_the_reference_oracle_scores_full_marks_in_every_setting(bundled):
    _, results = bundled
    settings = [(e.strategy, e.context) for e in results.summary if e.model == "reference"]
    assert settings == [("fh", "basic"), ("fh", "golden"), ("ce", "basic"), ("ce", "golden"), ("ci", "basic")]
    for e in results.summary:
        if e.model == "reference":
            assert (e.avg_acc, e.completion_rate, e.tasks, e.errors) == (1.0, 1.0, 6, 0), e
            assert e.acc_per_turn == [1.0] * 5 and e.tasks_per_turn == [6, 6, 6, 4, 1]
            assert set(e.levels) == {"function", "repository"} and e.levels["repository"].tasks == 2
    assert results.models["reference"] == "reference replay (oracle, not a model)"
    assert results.skipped_settings == ["ci with the golden context (Cumulative Instruction carries no code)"]


def test_every_bundled_task_is_valid_and_its_tests_discriminate(bundled):
    _, results = bundled
    assert [c.task_id for c in results.validation] == ["durations", "grades", "kvstore-cli", "kvstore-counter",
                                                      "roman", "slugify"]
    assert {r.task_id: r.language for r in results.rows if r.language != "python"} == {"grades": "java"}
    assert all(c.valid and not c.not_discriminative for c in results.validation)
    assert results.validation_problems == [] and results.load_errors == {}


def test_the_replay_loses_turns_where_its_script_says_and_basic_falls_below_golden(bundled):
    _, results = bundled
    fh, ce_basic, ce_golden, ci = (entry(results, "scripted-examples", s, c) for s, c in
                                   (("fh", "basic"), ("ce", "basic"), ("ce", "golden"), ("ci", "basic")))
    assert fh.avg_acc == 1.0 and fh.completion_rate == 1.0
    # Code Edit loses turn 2 of kvstore-cli in both contexts; in basic its own broken code is carried into turn 3.
    assert ce_basic.acc_per_turn[:3] == [1.0, 5 / 6, 5 / 6] and ce_golden.acc_per_turn[:3] == [1.0, 5 / 6, 1.0]
    assert ce_basic.acc_per_turn[2] < ce_golden.acc_per_turn[2]  # basic below golden on a later turn
    assert ce_basic.avg_acc < ce_golden.avg_acc < fh.avg_acc
    # Cumulative Instruction loses turn 3 of durations.
    assert ci.acc_per_turn[2] == 5 / 6 and ci.acc_per_turn[1] == 1.0 and ci.acc_per_turn[3] == 1.0
    assert ce_basic.completion_rate == ce_golden.completion_rate == ci.completion_rate == 5 / 6 < fh.completion_rate
    rows = {(r.strategy, r.context, r.task_id): r for r in results.rows if r.model == "scripted-examples"}
    assert rows[("ce", "basic", "kvstore-cli")].verdicts == [True, False, False, True]
    assert rows[("ce", "golden", "kvstore-cli")].verdicts == [True, False, True, True]
    assert rows[("ci", "basic", "durations")].verdicts == [True, True, False, True, True]
    # The Java task passes every turn in every setting, as the replay answers it.
    assert all(r.verdicts == [True] * 3 for (_, _, task), r in rows.items() if task == "grades")
    failing = rows[("ce", "basic", "kvstore-cli")].turns[1].failing
    assert any("missing_key" in nodeid for nodeid in failing)


def test_code_edit_costs_fewer_tokens_than_full_history_on_the_same_replies(bundled):
    _, results = bundled
    for model in ("reference", "scripted-examples"):
        for context in ("basic", "golden"):
            assert entry(results, model, "ce", context).atc < entry(results, model, "fh", context).atc
    # The same replies: every turn's output tokens agree where both strategies passed with the same file.
    rows = {(r.model, r.strategy, r.context, r.task_id): r for r in results.rows}
    fh, ce = rows[("reference", "fh", "basic", "slugify")], rows[("reference", "ce", "basic", "slugify")]
    assert [t.output_tokens for t in fh.turns] == [t.output_tokens for t in ce.turns]
    assert sum(t.input_tokens for t in fh.turns) > sum(t.input_tokens for t in ce.turns)
    assert fh.turns[0].input_tokens == ce.turns[0].input_tokens  # turn 1's prompts are the same


def test_results_files_hold_a_versioned_summary_and_the_curves(bundled):
    out, results = bundled
    data = json.loads((out / "results.json").read_text())
    assert data["schema_version"] == 1 and len(data["summary"]) == 10
    for item in data["summary"]:
        assert {"model", "strategy", "context", "acc_per_turn", "avg_acc", "completion_rate", "atc"} <= set(item)
        assert all(0 <= a <= 1 for a in item["acc_per_turn"]) and 0 <= item["avg_acc"] <= 1
        assert 0 <= item["completion_rate"] <= 1 and item["atc"] > 0
    markdown = (out / "results.md").read_text()
    assert "| scripted-examples | CE | basic | 6 | 1.0000 | 0.8333 | 0.8333 | 1.0000 | 1.0000 | 0.9333 | 0.8333 |" \
        in markdown
    assert "| kvstore-cli |" in markdown and "PFFP" in markdown and "## Repository level" in markdown
    html = (out / "results.html").read_text()
    assert html.count("<svg") == 1 and "Acc(k)" in html and "<polyline" in html
    folder = out / "scripted-examples" / "ce-basic" / "kvstore-cli"
    assert (folder / "turns" / "2" / "kvstore" / "cli.py").read_text().count("store.delete(args.key)\n") == 1
    assert len(json.loads((folder / "turns.json").read_text())) == 4
    log = read_run_log(folder)
    assert log.kind == "refine" and [s.id for s in log.samples] == [f"kvstore-cli/turn-{k}" for k in (1, 2, 3, 4)]
    assert (folder / "usage.jsonl").is_file() and (folder / "calls.jsonl").is_file()


def test_a_second_invocation_runs_nothing_and_gives_the_same_figures(bundled):
    out, results = bundled

    class NoRuns:
        def evaluate(self, *args, **kwargs):
            raise AssertionError("nothing should run again")

    plan = []
    spec = RefinementSpec(dataset=bundled_dataset_dir(),
                          models=(resolve_model("reference"), resolve_model("scripted:examples")))
    again = run_refinement(spec, out, runner=NoRuns(), hooks=Hooks(on_start=lambda p, d: plan.append((p, d))))
    assert plan == [(0, 60)]
    assert [e.model_dump() for e in again.summary] == [e.model_dump() for e in results.summary]
    keys = [entry["key"] for entry in Ledger(out / "ledger.jsonl").entries()]
    assert len(keys) == 66 and len(set(keys)) == 66  # 6 validations, 60 task runs, each recorded once


# --------------------------------------------------------------------------- batch logic with a fake runner

class ReferenceRunner:
    """Passes a turn when the target file equals that turn's reference; counts its runs."""

    def __init__(self):
        self.runs = 0

    def evaluate(self, task, candidate, suite):
        assert suite == TURN_SUITE
        self.runs += 1
        folder, number = task.root, int(task.id.rsplit("turn", 1)[1])
        reference = (folder / "turns" / str(number) / "reference.py").read_text()
        ok = reference in candidate.values()
        return TestReport(task_id=task.id, suite=suite,
                          tests=[TestResult(nodeid="t::ok", outcome=Outcome.PASSED if ok else Outcome.FAILED)])

    def isolation(self) -> str:
        return "namespaces"  # what a row records of the runner


def small_dataset(root: Path) -> Path:
    for name in ("alpha", "beta"):
        write_multiturn_task(root / name, [(f"{name} {k}", f"# {name} {k}\n", {f"test_{k}.py": "def test():\n    pass\n"})
                                           for k in (1, 2, 3)])
    return root


def script_file(path: Path, drop: tuple[str, int] | None = None) -> Path:
    responses = [{"role": "refiner", "target": name, "iteration": k, "content": f"```python\n# {name} {k}\n```\n"}
                 for name in ("alpha", "beta") for k in (1, 2, 3) if (name, k) != drop]
    path.write_text(json.dumps({"label": "test replay", "responses": responses}))
    return path


def test_a_failing_model_is_an_error_row_retried_on_the_next_invocation(tmp_path: Path):
    data = small_dataset(tmp_path / "data")
    script = script_file(tmp_path / "replay.json", drop=("beta", 1))
    spec = RefinementSpec(dataset=data, models=(resolve_model(f"rec=scripted:{script}"),), strategies=("ce",),
                          contexts=("basic",))
    runner = ReferenceRunner()
    results = run_refinement(spec, tmp_path / "out", runner=runner)
    rows = {r.task_id: r for r in results.rows}
    assert rows["alpha"].ok and rows["alpha"].verdicts == [True, True, True]
    assert not rows["beta"].ok and "no response for role='refiner' target='beta' iteration=1" in rows["beta"].error
    assert results.summary[0].tasks == 1 and results.summary[0].errors == 1
    assert "beta" in (tmp_path / "out" / "results.md").read_text() and "## Errors" in (
        tmp_path / "out" / "results.md").read_text()
    script_file(script)  # the script completed: beta runs again
    plan = []
    again = run_refinement(spec, tmp_path / "out", runner=runner, hooks=Hooks(
        on_start=lambda p, d: plan.append((p, d))))
    assert plan == [(1, 1)]
    assert all(r.ok for r in again.rows) and again.summary[0].completion_rate == 1.0
    usage = [json.loads(line) for line in (tmp_path / "out" / "rec" / "ce-basic" / "beta" / "usage.jsonl")
             .read_text().splitlines()]
    assert [(u["iteration"], bool(u.get("error"))) for u in usage] == [(1, True), (1, False), (2, False), (3, False)]


def test_a_token_budget_stops_a_task_run(tmp_path: Path):
    data = small_dataset(tmp_path / "data")
    spec = RefinementSpec(dataset=data, models=(resolve_model("reference"),), strategies=("fh",),
                          contexts=("basic",), max_tokens=60)
    results = run_refinement(spec, tmp_path / "out", runner=ReferenceRunner())
    assert all(not r.ok and "token budget" in r.error for r in results.rows)


def test_another_spec_under_the_same_name_runs_again_and_fresh_forgets(tmp_path: Path):
    data = small_dataset(tmp_path / "data")
    runner = ReferenceRunner()
    first = RefinementSpec(dataset=data, models=(resolve_model("m=reference"),), strategies=("ci",),
                           contexts=("basic",))
    run_refinement(first, tmp_path / "out", runner=runner)
    runs = runner.runs
    second = RefinementSpec(dataset=data, models=(resolve_model(f"m=scripted:{script_file(tmp_path / 's.json')}"),),
                            strategies=("ci",), contexts=("basic",))
    plan = []
    run_refinement(second, tmp_path / "out", runner=runner, hooks=Hooks(
        on_start=lambda p, d: plan.append((p, d))))
    assert plan == [(2, 0)] and runner.runs == runs + 6  # both tasks' three turns again; validation not
    plan.clear()
    run_refinement(second, tmp_path / "out", runner=runner, fresh=True,
                   hooks=Hooks(on_start=lambda p, d: plan.append((p, d))))
    assert plan == [(2, 0)] and runner.runs == runs + 6 + 10  # validation again (2 x 5 runs); turns hit its runs


def test_settings_tasks_and_models_are_checked_before_anything_runs(tmp_path: Path):
    data = small_dataset(tmp_path / "data")
    with pytest.raises(ProjectGenError, match="nothing to run: ci with the golden context"):
        RefinementSpec(dataset=data, models=(resolve_model("reference"),), strategies=("ci",),
                       contexts=("golden",)).settings()
    with pytest.raises(ProjectGenError, match="unknown strategy"):
        RefinementSpec(dataset=data, models=(resolve_model("reference"),), strategies=("xx",))
    spec = RefinementSpec(dataset=data, models=(resolve_model("reference"),), tasks=("alpha", "gamma"))
    with pytest.raises(ProjectGenError, match=r"unknown task\(s\) gamma"):
        run_refinement(spec, tmp_path / "out", runner=ReferenceRunner())
    with pytest.raises(ProjectGenError, match="no such script file"):
        resolve_model("scripted:/nowhere.json")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "alpha.json").write_text("{}")
    with pytest.raises(ProjectGenError, match="not a folder of scripts"):
        resolve_model(f"scripted:{tmp_path / 'dir'}")
    assert resolve_model("scripted:examples").slug == "scripted-examples"
    assert resolve_model("rep=scripted:examples").slug == "rep"
    shutil.rmtree(data / "beta")
    only = run_refinement(RefinementSpec(dataset=data, models=(resolve_model("reference"),), strategies=("fh",),
                                         contexts=("basic",), tasks=("alpha",)), tmp_path / "out2",
                          runner=ReferenceRunner())
    assert [r.task_id for r in only.rows] == ["alpha"]


def test_a_task_whose_reference_fails_is_left_out_and_named(tmp_path: Path):
    data = small_dataset(tmp_path / "data")

    class BetaFails(ReferenceRunner):
        def evaluate(self, task, candidate, suite):
            report = super().evaluate(task, candidate, suite)
            if task.id == "beta.turn2":
                report.tests[0].outcome = Outcome.FAILED
            return report

    results = run_refinement(RefinementSpec(dataset=data, models=(resolve_model("reference"),), strategies=("fh",),
                                            contexts=("basic",)), tmp_path / "out", runner=BetaFails())
    assert [r.task_id for r in results.rows] == ["alpha"]
    assert any("beta: turn 2's reference does not pass its own tests" in p for p in results.validation_problems)


def test_bundled_task_folders_load_as_the_loader_documents():
    task = load_multiturn_task(bundled_dataset_dir() / "durations")
    assert task.level == "function" and len(task.turns) == 5


class FlaggingRunner(ReferenceRunner):
    """The reference runner whose reports carry the candidate's integrity flags, as the sandbox runner's do."""

    def evaluate(self, task, candidate, suite):
        from projectgen.evaluation.integrity_flags import candidate_flags

        report = super().evaluate(task, candidate, suite)
        report.integrity_flags = candidate_flags(task, candidate)
        return report


def test_a_turns_integrity_flags_reach_results_json_and_md(tmp_path: Path):
    data = small_dataset(tmp_path / "data")
    script = script_file(tmp_path / "replay.json")
    replies = json.loads(script.read_text())
    replies["responses"][1]["content"] = "```python\n# alpha 2\nimport ctypes\n```\n"  # alpha's turn 2
    script.write_text(json.dumps(replies))
    spec = RefinementSpec(dataset=data, models=(resolve_model(f"rec=scripted:{script}"),), strategies=("ce",),
                          contexts=("basic",))
    results = run_refinement(spec, tmp_path / "out", runner=FlaggingRunner())
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    turns = {row["task_id"]: [turn["integrity_flags"] for turn in row["turns"]] for row in saved["rows"]}
    assert turns["beta"] == [[], [], []]
    assert [[flag["kind"] for flag in flags] for flags in turns["alpha"]] == [[], ["ctypes"], []]
    shown = (tmp_path / "out" / "results.md").read_text()
    assert "## Integrity flags" in shown and "| rec/ce-basic/alpha | ctypes | mod.py:2 | import ctypes |" in shown
    assert results.rows[0].integrity_flags()[0].kind == "ctypes"
