"""The checks of scripts/smoke_external.py (`make smoke-external`) on folders written here: each must fail on
what it is there to catch (the smoke itself needs llama-cpp-python and a built system; not run here)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def smoke() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # the script imports smoke_local_model beside it
    try:
        spec = importlib.util.spec_from_file_location("smoke_external", SCRIPTS / "smoke_external.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def write_experiment(folder: Path, *, status: str = "finished", calls: int = 2, labelled: bool = True,
                     total: int | None = 11, version: str | None = "0.3.1", files: int | None = None) -> None:
    run = folder / "gpt-engineer" / "smollm2" / "wordfreq"
    run.mkdir(parents=True)
    if files is not None:
        (run / "summary.json").write_text(json.dumps({"status": "failed", "files": files}))
    (run / "run.json").write_text(json.dumps({"status": "failed", "reason": "the system exited with status 1",
                                              "protocol": {"system": "gpt-engineer", "source": "pypi",
                                                           "distribution": "gpt-engineer", "version": version,
                                                           "adapter_sha256": "ab" * 32}}))
    (run / "usage.jsonl").write_text("".join(json.dumps({"role": "external", "attempts": 1}) + "\n"
                                             for _ in range(calls)))
    (folder / "ledger.jsonl").write_text(json.dumps({"key": "gpt-engineer/smollm2/wordfreq", "method": "gpt-engineer",
                                                     "status": status, "final_unit_passed": 0,
                                                     "final_unit_total": total}) + "\n")
    method = "gpt-engineer" if labelled else "other"
    (folder / "results.json").write_text(json.dumps({"models": [{"method": method, "model": "smollm2"}]}))
    (folder / "results.md").write_text(f"## {method} / smollm2\n")


def failed(smoke: ModuleType, folder: Path, server_requests: int | None = 2) -> set[str]:
    return {check.name for check in smoke.system_checks("gpt-engineer", folder, server_requests) if not check.ok}


def test_a_system_that_ran_through_the_bridge_and_was_scored_passes_even_when_it_failed(smoke, tmp_path) -> None:
    write_experiment(tmp_path)
    assert failed(smoke, tmp_path) == set()


def test_a_system_that_wrote_no_file_has_nothing_to_score_and_passes(smoke, tmp_path) -> None:
    """wordfreq declares no #Tests, so a run that wrote nothing has none (the tiny model's usual outcome)."""
    write_experiment(tmp_path, total=None, files=0)
    assert failed(smoke, tmp_path) == set()


def test_a_call_around_the_bridge_an_error_row_an_unscored_or_unlabelled_output_each_fail(smoke, tmp_path) -> None:
    write_experiment(tmp_path / "ok")
    assert failed(smoke, tmp_path / "ok", server_requests=3) == {
        "gpt-engineer: every call went through the bridge (server requests = recorded requests)"}
    assert failed(smoke, tmp_path / "ok", server_requests=None) == {
        "gpt-engineer: every call went through the bridge (server requests = recorded requests)"}
    write_experiment(tmp_path / "error", status="error")
    assert failed(smoke, tmp_path / "error") == {"gpt-engineer: its pair is a row, not an error"}
    write_experiment(tmp_path / "unscored", total=None)
    assert failed(smoke, tmp_path / "unscored") == {"gpt-engineer: its output was scored"}
    write_experiment(tmp_path / "files-unscored", total=None, files=3)
    assert failed(smoke, tmp_path / "files-unscored") == {"gpt-engineer: its output was scored"}
    write_experiment(tmp_path / "unlabelled", labelled=False)
    assert failed(smoke, tmp_path / "unlabelled") == {"gpt-engineer: its results are labelled"}
    write_experiment(tmp_path / "silent", calls=0)
    assert failed(smoke, tmp_path / "silent", server_requests=0) == {
        "gpt-engineer: it called the model through the bridge"}
    write_experiment(tmp_path / "unversioned", version=None)
    assert failed(smoke, tmp_path / "unversioned") == {
        "gpt-engineer: run.json names the system, its source, version and adapter"}


def test_the_smoke_runs_every_pypi_system_and_no_checkout_one(smoke) -> None:
    names = smoke.pypi_systems()
    assert "fake" in names and "chatdev" not in names


def test_a_checkout_system_runs_with_its_checkout_and_its_run_must_name_the_checkouts_commit(smoke, tmp_path) -> None:
    assert smoke.checkout_paths(["codes=/src/CodeS"]) == {"codes": "/src/CodeS"}
    argv = smoke.experiment_arguments("codes", "http://127.0.0.1:1/v1", tmp_path, None, 256, "/src/CodeS")
    assert argv[argv.index("--system-path") + 1] == "codes=/src/CodeS"
    for version, failing in ((None, {"gpt-engineer: run.json names the system, its source, version and adapter"}),
                             ("0b624ab4ef22b0d9d223f274a986eb27fe090c88", set())):
        folder = tmp_path / str(version)
        write_experiment(folder, version=version)
        run_json = folder / "gpt-engineer" / "smollm2" / "wordfreq" / "run.json"
        manifest = json.loads(run_json.read_text())
        manifest["protocol"].update(source="checkout", distribution="")
        run_json.write_text(json.dumps(manifest))
        assert failed(smoke, folder) == failing
