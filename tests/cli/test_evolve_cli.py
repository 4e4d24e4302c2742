"""`projectgen evolve` as a user runs it: the demo's run changed by the bundled kvstore-counter turns."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_OK, EXIT_USAGE
from projectgen.datasets.examples import example_script_path
from projectgen.datasets.multiturn import bundled_dataset_dir

TURNS = bundled_dataset_dir() / "kvstore-counter" / "turns"


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli-evolve") / "demo"
    assert main(["demo", "--out", str(out)]) == EXIT_OK
    return out


def evolve_argv(base: Path, turn: int, out: Path) -> list:
    return ["evolve", base, "--requirement", TURNS / str(turn) / "requirement.md", "--tests", TURNS / str(turn) / "tests",
            "--model", f"scripted:{example_script_path(f'kvstore.evolve{turn}')}", "--out", out, "--no-unit-tests"]


@pytest.mark.slow  # evolve's run is in the default suite through tests/runs/test_evolve.py
def test_evolve_the_demo_twice_and_trace_the_tree_diff(demo: Path, tmp_path: Path, capsys):
    code, out, err = run(capsys, *evolve_argv(demo, 1, tmp_path / "one"))
    assert code == EXIT_OK, out + err
    assert "tree diff: added kvstore/counter.py; changed none; removed none" in out
    assert "redone: kvstore/counter.py (importers: none); kept byte for byte: 7 file(s)" in out
    assert "generator calls per file: kvstore/counter.py 2; on kept files: none" in out
    assert "check tests: the change's 7/7, the earlier requirements' 5/5" in out
    code, out, err = run(capsys, *evolve_argv(tmp_path / "one", 2, tmp_path / "two"))
    assert code == EXIT_OK, out + err
    assert "check tests: the change's 7/7, the earlier requirements' 12/12" in out
    assert "code 1/5: score 7.89, revising (15/19 check tests)" in out  # the regression tests caught the first code
    code, out, _ = run(capsys, "trace", tmp_path / "two")
    assert code == EXIT_OK and "Counter.incr signature" in out and "evolved from:" in out
    code, _, err = run(capsys, "run", "--resume", tmp_path / "two")
    assert code == EXIT_USAGE and "an evolve run; continue it with `projectgen evolve --resume" in err
    code, out, _ = run(capsys, "evolve", "--resume", tmp_path / "two")  # finished: outputs written again
    assert code == EXIT_OK and "check tests: the change's 7/7" in out


def test_the_default_out_folder_is_named_after_the_change(demo: Path, tmp_path: Path, capsys, monkeypatch):
    base = tmp_path / "mine"
    import shutil

    shutil.copytree(demo, base)
    argv = evolve_argv(base, 1, tmp_path / "x")
    code, out, err = run(capsys, *argv[:argv.index("--out")], "--no-unit-tests")
    assert code == EXIT_OK, out + err
    assert (tmp_path / "mine-evolve1" / "evolve.json").is_file()
    assert json.loads((tmp_path / "mine-evolve1" / "run.json").read_text())["method"] == "evolve"


@pytest.mark.parametrize("argv, fragment", [
    (["evolve"], "give the finished run folder to evolve"),
    (["evolve", "DEMO"], "give the new requirement: --requirement FILE"),
    (["evolve", "DEMO", "--requirement", "nope.md"], "nope.md: requirement file not found"),
    (["evolve", "DEMO", "--requirement", "REQ", "--model", "reference"], "--model reference has no reference"),
    (["evolve", "DEMO", "--requirement", "REQ", "--tests", "nowhere", "--model", "scripted:SCRIPT"],
     "nowhere: tests folder not found"),
    (["evolve", "--resume", "DEMO", "--model", "x:y"], "give only the folder"),
    (["evolve", "--resume", "DEMO"], "a livecoder run, not an evolve run"),
])
def test_bad_input_is_one_line_and_exit_code_2(demo: Path, tmp_path: Path, capsys, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    replaced = {"DEMO": str(demo), "REQ": str(TURNS / "1" / "requirement.md"),
                "SCRIPT": str(example_script_path("kvstore.evolve1"))}
    code, _, err = run(capsys, *[replaced.get(a, a) for a in argv])
    lines = err.strip().splitlines()
    assert code == EXIT_USAGE and len(lines) == 1 and fragment in lines[0] and "Traceback" not in err, err
    assert not any(p.name.endswith("-evolve1") for p in demo.parent.iterdir())
