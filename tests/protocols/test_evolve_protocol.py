"""Evolve as a protocol: `evaluate("evolve", BASE, [MODEL], settings, OUT)` and `projectgen evaluate evolve` change the
demo's run by the bundled kvstore-counter turn 1, and the same call again continues the run in OUT.

The run itself (its plan, its kept files, its regression tests, resume after a failure) is tested through
`run_evolve` in tests/runs/test_evolve.py and through `projectgen evolve` in tests/cli/test_evolve_cli.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_OK
from projectgen.datasets.examples import example_script_path
from projectgen.datasets.multiturn import bundled_dataset_dir
from projectgen.errors import ProjectGenError
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.evolve.batch import EvolveResults
from projectgen.runs.layout import CALLS

TURN = bundled_dataset_dir() / "kvstore-counter" / "turns" / "1"
SCRIPT = f"scripted:{example_script_path('kvstore.evolve1')}"
OTHER_SCRIPT = f"scripted:{example_script_path('kvstore.evolve2')}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("evolve-protocol") / "demo"
    assert main(["demo", "--out", str(out)]) == EXIT_OK
    return out


def change(**more: object) -> dict[str, object]:
    return {"requirement": (TURN / "requirement.md").read_text(encoding="utf-8"), "tests": str(TURN / "tests"),
            "unit_tests": False, **more}


def test_evaluate_evolve_runs_the_change_and_the_same_call_continues_it(demo: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "change1"
    code = main(["evaluate", "evolve", "--dataset", str(demo), "--model", SCRIPT, "--out", str(out),
                 *[f"--set={key}={json.dumps(value)}" for key, value in change().items()]])
    printed = capsys.readouterr().out
    assert code == EXIT_OK, printed
    assert f"results: {out / 'evolve.json'}" in printed and "results.json" not in printed  # evolve's figures
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["method"] == "evolve"
    record = json.loads((out / "evolve.json").read_text(encoding="utf-8"))
    assert record["plan"]["redo"] == ["kvstore/counter.py"] and record["kept_identical"] is True
    assert (record["check_new"], record["check_regression"]) == ({"passed": 7, "total": 7}, {"passed": 5, "total": 5})
    assert not (out / "unit_report.json").exists()  # unit_tests=false
    calls = (out / CALLS).read_text(encoding="utf-8")

    again = evaluate("evolve", demo, [SCRIPT], change(), out)  # finished: read back, its outputs written again
    assert isinstance(again, EvolveResults) and again.check_report is not None
    assert again.check_report.status == "passed" and again.record.check_new.passed == 7
    assert (out / CALLS).read_text(encoding="utf-8") == calls  # no model call made again

    with pytest.raises(ProjectGenError, match="holds an evolve run that differs in its change request"):
        evaluate("evolve", demo, [SCRIPT], change(requirement="Something else entirely."), out)
    with pytest.raises(ProjectGenError, match="holds an evolve run that differs in its models"):
        evaluate("evolve", demo, [OTHER_SCRIPT], change(), out)


@pytest.mark.parametrize("models, settings, fragment", [
    ([SCRIPT, OTHER_SCRIPT], change(), "evolve runs one model"),
    (["reference"], change(), "--model reference has no reference"),
    ([SCRIPT], change(requirement="  "), "the change request is empty"),
    ([SCRIPT], change(tests="/no/such/tests"), "tests folder not found"),
    ([SCRIPT], change(tries=2), "protocol evolve: bad settings (tries: Extra inputs are not permitted)"),
])
def test_what_cannot_run_is_one_line_before_anything_is_written(demo: Path, tmp_path: Path, models: list[str],
                                                                settings: dict[str, object], fragment: str) -> None:
    with pytest.raises(ProjectGenError) as raised:
        evaluate("evolve", demo, models, settings, tmp_path / "out")
    assert fragment in str(raised.value) and "\n" not in str(raised.value)
    assert not (tmp_path / "out").exists()
