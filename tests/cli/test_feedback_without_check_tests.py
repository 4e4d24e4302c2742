"""Execution feedback on a benchmark without visible tests (issue 37 item 2), as a user runs it.

RAL-Bench and NL2Repo-Bench publish no check tests: LiveCoder gives every method the functional tests' output,
so Self-Reflection (and ProjectGen's code judge inside LiveCoder) repair from them, where Direct cannot. The
tasks' profile sets `feedback_suite = "unit"`; with it switched off Self-Reflection would equal Direct.
The replay breaks `top_words` in the first answer (one of the three functional tests fails) and repairs it.
The prompts that show the tests' output call them "the tests", never check tests (the run records every prompt).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from projectgen.cli import main
from projectgen.datasets.loaders import load_task
from projectgen.oracles.reference_replay import Breakage, reference_script

RALBENCH = Path(__file__).parents[1] / "datasets" / "benchmark_layouts" / "ralbench"
WORDCOUNT = RALBENCH / "tasks" / "Wordcount"
BROKEN = Breakage("wordcount/__init__.py", "top_words")  # count_words still works: 2 of 3 functional tests pass


def broken_replay(folder: Path) -> Path:
    """A replay whose first code fails one functional test and whose repair passes them all."""
    script = reference_script(load_task(WORDCOUNT), breakage=BROKEN)
    path = folder / "wordcount.json"
    path.write_text(json.dumps(script.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    return path


def run_method(method: str, script: Path, out: Path, env_cache: Path,
               exit_status: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """`projectgen run` of the RAL-Bench task with `method`, no setting given: (run.json, summary.json)."""
    code = main(["run", str(WORDCOUNT), "--method", method, "--model", f"scripted:{script}", "--out", str(out),
                 "--cache-dir", str(env_cache)])
    assert code == exit_status  # 0 when the unit tests all pass, 1 when some fail
    return (json.loads((out / "run.json").read_text(encoding="utf-8")),
            json.loads((out / "summary.json").read_text(encoding="utf-8")))


def unit_passes(summary: dict[str, Any]) -> tuple[int, int]:
    return summary["unit_tests"]["passed"], summary["unit_tests"]["total"]


def recorded_prompts(run: Path) -> list[str]:
    """The text of every prompt the run's models were asked (its prompts.jsonl)."""
    lines = (run / "prompts.jsonl").read_text(encoding="utf-8").splitlines()
    return ["\n".join(m["content"] for m in json.loads(line)["messages"]) for line in lines]


def saying_check_tests(prompts: list[str]) -> list[str]:
    return [p for p in prompts if "check test" in p.lower() or "check-test" in p.lower()]


def test_self_reflection_repairs_from_the_hidden_tests_where_direct_cannot(tmp_path: Path, env_cache: Path) -> None:
    script = broken_replay(tmp_path)
    direct_manifest, direct = run_method("direct", script, tmp_path / "direct", env_cache, 1)
    reflect_manifest, reflect = run_method("self-reflection", script, tmp_path / "reflect", env_cache, 0)
    assert unit_passes(direct) == (2, 3)
    assert unit_passes(reflect) == (3, 3)  # one repair from the functional tests' output
    for recorded in (direct_manifest, direct, reflect_manifest, reflect):  # the feedback source is on record
        assert (recorded["settings"]["profile"], recorded["settings"]["feedback_suite"]) == ("paper", "unit")
    attempt = json.loads((tmp_path / "reflect" / "attempts" / "1" / "attempt.json").read_text(encoding="utf-8"))
    rounds = attempt["stages"]["code"]["checks"]
    assert [(r["passed"], r["total"]) for r in rounds] == [(2, 3), (3, 3)]
    assert rounds[0]["failing"] == ["tests/Wordcount/functional_test.py::test_top_words_orders_by_count_then_word"]
    assert main(["report", str(tmp_path / "reflect")]) == 0
    report = (tmp_path / "reflect" / "report.md").read_text(encoding="utf-8")
    assert "**execution feedback**: the hidden unit tests' output was given to the generators" in report
    assert "2 of 3 hidden unit tests pass" in report  # never passed off as check tests
    prompts = recorded_prompts(tmp_path / "reflect")  # nor to the model: its prompts say "the tests"
    assert sum("# The test errors (2 of 3 tests pass)" in p for p in prompts) == 2  # the reflection and the fix
    assert saying_check_tests(prompts) == [] and not any("hidden" in p.lower() for p in prompts)


@pytest.mark.slow  # three runs and RAL-Bench's non-functional suites on the outputs and the reference
def test_an_experiment_records_the_feedback_source_and_livecoders_projectgen_repairs_too(
        tmp_path: Path, env_cache: Path, capsys) -> None:
    script = broken_replay(tmp_path)
    out = tmp_path / "experiment"
    assert main(["experiment", "--dataset", str(RALBENCH), "--method", "direct,self-reflection,projectgen",
                 "--model", f"broken=scripted:{script}", "--out", str(out), "--cache-dir", str(env_cache)]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    pairs = {model["method"]: pair for model in results["models"] for pair in model["pairs"]}
    assert {method: (p["final_unit_passed"], p["final_unit_total"]) for method, p in pairs.items()} == {
        "direct": (2, 3), "self-reflection": (3, 3), "projectgen": (3, 3)}
    assert {p["feedback_suite"] for p in pairs.values()} == {"unit"}
    assert {p["maintainability_measure"] for p in pairs.values()} == {"visual-studio-mi"}
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert markdown.count("feedback unit (the hidden unit tests' output was given to the generators)") == 3
    attempt = json.loads((out / "projectgen" / "broken" / "wordcount" / "attempts" / "1" / "attempt.json")
                         .read_text(encoding="utf-8"))
    code = attempt["stages"]["code"]  # ProjectGen's code judge ran the functional tests and the coder repaired
    assert [(c["passed"], c["total"]) for c in code["checks"]] == [(2, 3), (3, 3)] and code["accepted"]
    printed = capsys.readouterr().out  # and its progress lines say so
    assert "code 1/5: score 6.67, revising (2/3 hidden unit tests)" in printed and "check tests" not in printed
    runs = {method: out / method / "broken" / "wordcount" for method in pairs}
    judged = recorded_prompts(runs["projectgen"])  # the code judge and the coder's repair call them "the tests"
    assert any("# Test results: 2 of 3 passed" in p for p in judged) and any("# The test errors\n" in p for p in judged)
    assert [saying_check_tests(recorded_prompts(run)) for run in runs.values()] == [[], [], []]
