"""A method that generated nothing for a published task keeps the task's #Tests with no test passed, as an error row
does (it showed #Pass 0/0 and dropped out of SUM's #Tests: found with the tiny real model, whose architecture
replies ProjectGen could not use)."""
from __future__ import annotations

import json
from pathlib import Path

from projectgen.cli.main import main


def test_a_run_that_generated_nothing_keeps_the_published_tests_with_none_passed(
        shared_datasets: Path, tmp_path: Path, capsys) -> None:
    script = tmp_path / "nothing.json"
    script.write_text(json.dumps({"label": "a replay that writes no file (not a model)", "responses": [
        {"role": "direct", "content": "I cannot write this project."}]}), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["experiment", "--dataset", str(shared_datasets / "DevBench"), "--tasks", "readtime", "--model",
                 f"scripted:{script}", "--method", "direct", "--attempts", "1", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    [model] = json.loads((out / "results.json").read_text())["models"]
    [pair] = model["pairs"]
    assert pair["status"] == "finished"
    assert (pair["final_unit_passed"], pair["final_unit_total"], pair["unit_denominator"]) == (0, 8, "published")
    assert (model["final"]["passed"], model["final"]["total"]) == (0, 8)  # readtime's 8 published tests
