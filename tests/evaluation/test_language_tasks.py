"""task.toml tasks in another language than Python: `language` is read (and checked), and `eval` and
`bench-reference` run a Go and a Java project (tests/evaluation/language_tasks, written for these tests)
with the language's own runner in the sandbox: the reference passes every test, as many as `go test` /
the JUnit console launcher count when run directly on the same files, and the stub none (both are slow: the slow
suite runs them, with the bundled Java exercise and `refine`'s Java task)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from own_runners import own_runner_passed
from projectgen.cli import main
from projectgen.datasets.loaders import load_task
from projectgen.errors import TaskFormatError
from projectgen.evaluation.languages.toolchains import probe_toolchain

TASKS = Path(__file__).parent / "language_tasks"


def _task_folder(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "t"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "PRD.md").write_text("Count words.\n")
    (folder / "w_test.go").write_text("package w\n")
    (folder / "task.toml").write_text(f'id = "w"\n{extra}\n[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "w_test.go"\n')
    return folder


def test_language_is_read_and_checked(tmp_path: Path) -> None:
    assert load_task(TASKS / "wordstat-go").language == "go"
    java = load_task(TASKS / "tally-java")
    assert java.language == "java" and java.suites["unit"].paths == ("src/test/java",)
    assert load_task(_task_folder(tmp_path, "")).language == "python"
    with pytest.raises(TaskFormatError, match=r"language: expected one of python, java, cpp, rust, go, javascript, "
                                              r"got 'kotlin'"):
        load_task(_task_folder(tmp_path / "a", 'language = "kotlin"'))
    with pytest.raises(TaskFormatError, match=r"\[env\]: python, requirements: only for Python tasks \(this task's "
                                              r"language is go\)"):
        load_task(_task_folder(tmp_path / "b", 'language = "go"\n[env]\nrequirements = ["x"]\npython = "3.11"'))


def test_a_suite_folder_stands_for_the_test_files_below_it() -> None:
    from projectgen.evaluation.languages.plans import PLANS
    from projectgen.evaluation.languages.session import suite_test_files

    java = load_task(TASKS / "tally-java")
    assert suite_test_files(java, "unit", PLANS["java"]) == ("src/test/java/TallyEmptyTest.java",
                                                            "src/test/java/TallyTest.java")
    go = load_task(TASKS / "wordstat-go")
    assert suite_test_files(go, "unit", PLANS["go"]) == ("wordstat_test.go",)


# Java's runs start JVMs (slow); its runner is in the slow suite also through the bundled exercise and refine
# both start toolchains (go's is ~10 s here); Go's runner is in the default suite through its twins
# (test_language_twins.py)
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) for n in ("wordstat-go", "tally-java")])
def test_eval_and_bench_reference_score_the_reference_fully_and_the_stub_at_zero(name: str, tmp_path: Path,
                                                                                  capsys) -> None:
    task = load_task(TASKS / name)
    toolchain = probe_toolchain(task.language)
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    cache = tmp_path / "cache"
    reference = {rel: (task.root / task.reference_root / rel).read_text() for rel in task.reference}
    count = own_runner_passed(task, reference, toolchain, cache, tmp_path / "own")
    assert count > 0

    out = tmp_path / "bench"
    assert main(["bench-reference", str(TASKS), "--tasks", name, "--out", str(out), "--cache-dir", str(cache)]) == 0
    rows = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r.get("task_id") == name or r.get("row", {}).get("task_id") == name)
    row = row.get("row", row)
    assert (row["status"], row["passed"], row["total"]) == ("passed", count, count)

    stub = tmp_path / "stub"
    for rel, text in task.docs.starter.items():
        (stub / rel).parent.mkdir(parents=True, exist_ok=True)
        (stub / rel).write_text(text)
    capsys.readouterr()
    assert main(["eval", "--task", str(TASKS / name), "--repo", str(stub), "--out", str(tmp_path / "stub.json"),
                 "--cache-dir", str(cache)]) != 0
    report = json.loads((tmp_path / "stub.json").read_text())
    assert report["tampered"] is None and report["tests"]
    assert [t for t in report["tests"] if t["outcome"] == "passed"] == []


def test_a_build_file_a_suite_names_is_put_in_place_but_is_no_test_target(tmp_path: Path) -> None:
    """LiveRepoReflection's Rust exercises list Cargo.toml under `files.test`: it was run as `cargo test --lib`,
    which found no test there, so the reference scored 12/13 where `cargo test` passes 12/12."""
    import json
    import shutil

    from projectgen.datasets.examples import example_exercises_dir
    from projectgen.datasets.exercism import exercise_task, load_exercise
    from projectgen.evaluation.languages.plans import PLANS
    from projectgen.evaluation.languages.session import suite_test_files

    folder = tmp_path / "digit_sum"
    shutil.copytree(example_exercises_dir() / "digit_sum", folder)
    config_path = folder / ".meta" / "config.json"
    config = json.loads(config_path.read_text())
    config["files"]["solution"] = ["src/lib.rs"]
    config["files"]["test"] = ["Cargo.toml", "tests/digit_sum.rs"]
    config["files"]["example"] = [".meta/src/lib.rs"]
    config_path.write_text(json.dumps(config))
    task = exercise_task(load_exercise(folder))
    assert any(rel.endswith("Cargo.toml") for rel in task.suite_files("unit"))  # put in place from the task
    assert [rel.rsplit("/", 1)[-1] for rel in suite_test_files(task, "unit", PLANS["rust"])] == ["digit_sum.rs"]
