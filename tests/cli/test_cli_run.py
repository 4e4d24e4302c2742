"""`projectgen run` and `projectgen demo` as a user meets them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from projectgen.config import AttemptSettings
from projectgen.runs import RunRequest
from projectgen.cli import main
from projectgen.datasets.examples import example_script_path, example_task_path
from projectgen.datasets.loaders import load_task
from test_support import restore_sigint

DEMO_SCRIPT = example_script_path("kvstore.demo")


def test_demo_runs_the_whole_pipeline_offline_and_says_it_is_a_replay(tmp_path: Path, env_cache: Path,
                                                                    monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """In this process (`main`, as `python -m projectgen` calls it): a new interpreter per demo would only import
    projectgen and LangGraph again."""
    out = tmp_path / "demo"
    for name in [k for k in os.environ if k.startswith(("OPENAI", "PROJECTGEN_MODEL"))]:
        monkeypatch.delenv(name)
    code = main(["demo", "--out", str(out), "--cache-dir", str(env_cache)])
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    text = " ".join(printed.out.split())
    assert "scripted replay" in text and "not a real model" in text
    assert "29" in text and "100.0%" in text and str(out) in text
    summary = json.loads((out / "summary.json").read_text())
    first, second = summary["attempts"]
    assert first["stages"]["architecture"]["scores"] == [6.0, 9.0]
    assert first["stages"]["code"]["scores"] == [8.0, 10.0] and first["stages"]["code"]["iterations"] == 2
    assert first["check"]["passed"] == first["check"]["total"] == 5 and first["score"] == 1.0
    assert second["reused"] and summary["final"] == {"source": "reused", "attempt": 1, "score": 1.0}
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
    assert all(m.startswith("scripted model (") for m in summary["model_descriptions"].values())
    assert (out / "events.jsonl").exists() and (out / "checkpoints.sqlite").exists()
    assert (out / "repository" / "kvstore" / "store.py").read_text().count("now >= expires_at") == 1
    # the demo may be run again: it replaces its own outputs
    again = main(["demo", "--out", str(out), "--cache-dir", str(env_cache), "--isolation", "auto"])
    assert again == 0, capsys.readouterr().err


def test_run_with_caps_of_one_reports_the_unrepaired_failure(tmp_path: Path, env_cache: Path, capsys) -> None:
    out = tmp_path / "run"
    code = main(["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--out", str(out), "--iterations",
                 "1,1,1", "--attempts", "1", "--no-unit-tests", "--cache-dir", str(env_cache)])
    assert code == 1  # the only attempt passed 4 of 5 check tests and no unit tests ran to say otherwise
    summary = json.loads((out / "summary.json").read_text())
    (attempt,) = summary["attempts"]
    assert {name: s["iterations"] for name, s in attempt["stages"].items()} == {
        "architecture": 1, "skeleton": 1, "code": 1}
    assert attempt["check"]["passed"] == 4 and attempt["score"] == pytest.approx(0.8)
    assert attempt["unit"] is None and not (out / "unit_report.json").exists()
    usage = [json.loads(line) for line in (out / "usage.jsonl").read_text().splitlines()]
    assert {u["role"] for u in usage} == {"architect", "architecture_judge", "skeleton", "skeleton_judge",
                                          "coder", "code_judge"}  # no knowledge call after the last attempt
    assert "0.80" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "kvstore"], "no model given"),
        (["run"], "give a task"),
        (["run", "--resume", "{nonempty}"], "not a run folder"),
        (["run", "/no/such/task", "--model", "x"], "/no/such/task: task folder not found"),
        (["run", "kvstore", "--model", "scripted:/no/such/script.json"], "script file not found"),
        (["run", "kvstore", "--model", "openai:gpt-4o-mini", "--role-model", "poet=openai:gpt-4o"],
         "unknown model role(s) poet"),
        (["run", "kvstore", "--model", "openai:gpt-4o-mini", "--role-model", "coder"], "expects ROLE=SPEC"),
        (["run", "kvstore", "--model", "scripted:{script}", "--out", "{nonempty}"], "is not empty"),
    ],
)
def test_run_user_mistakes_are_one_line_and_exit_2(argv: list[str], message: str, tmp_path: Path,
                                                   monkeypatch, capsys) -> None:
    monkeypatch.delenv("PROJECTGEN_MODEL", raising=False)
    nonempty = tmp_path / "earlier-run"
    nonempty.mkdir()
    (nonempty / "keep.txt").write_text("earlier results")
    argv = [a.format(script=DEMO_SCRIPT, nonempty=nonempty) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("projectgen: error:") and message in err
    assert len(err.splitlines()) == 1
    assert (nonempty / "keep.txt").read_text() == "earlier results"  # nothing lost


@pytest.mark.parametrize("value", ["3,3", "3,0,5", "a,b,c"])
def test_bad_iteration_caps_exit_2(value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "projectgen.cli", "run", "kvstore", "--model", "x",
                           "--iterations", value], capture_output=True, text=True)
    assert done.returncode == 2 and "--iterations" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("bad, message", [
    (["--checkpoint-url", "mysql://host/db"], "PostgreSQL URL"),
    (["--prices", "missing-prices.toml"], "missing-prices.toml"),
    (["--max-cost", "-1"], "--max-cost"),
])
def test_a_bad_budget_or_checkpoint_option_is_one_line_and_writes_nothing(tmp_path: Path, bad: list[str],
                                                                         message: str, monkeypatch, capsys) -> None:
    out = tmp_path / "run"
    monkeypatch.chdir(tmp_path)
    assert main(["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--out", str(out), *bad]) == 2
    err = capsys.readouterr().err  # an unexpected exception would be a traceback here and exit code 70
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_unreachable_checkpoint_database_is_one_line(tmp_path: Path, env_cache: Path, capsys) -> None:
    out = tmp_path / "run"
    code = main(["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--out", str(out), "--cache-dir",
                 str(env_cache), "--checkpoint-url", f"postgresql://nobody:secret@/x?host={tmp_path}&port=1"])
    printed = capsys.readouterr()
    assert code == 2, printed.out + printed.err
    assert "cannot reach the checkpoint database" in printed.err and "Traceback" not in printed.err
    assert "secret" not in printed.out + printed.err  # the password is not echoed
    assert not out.exists()  # refused before the run folder is made


def test_max_cost_is_kept_in_the_manifest_for_resume(tmp_path: Path, env_cache: Path) -> None:
    out = tmp_path / "run"
    code = main(["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--out", str(out), "--attempts", "1",
                 "--no-unit-tests", "--cache-dir", str(env_cache), "--max-cost", "0.5", "--max-tokens", "900000",
                 "--embedding", "hashing"])
    assert code == 0
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["max_cost_usd"] == 0.5 and manifest["max_tokens"] == 900000
    assert manifest["embedding"] == "hashing"  # the knowledge store's, which a resume reopens it with
    assert manifest["status"] == "finished"  # a scripted replay costs nothing


def test_run_json_records_the_sampling_and_a_resume_keeps_it(tmp_path: Path) -> None:
    """The models' temperature, top_p and output cap are in run.json; overrides from the CLI are kept in its
    model specs, so --resume makes the same models."""
    from projectgen.cli import build_parser
    from projectgen.cli.run import model_specs_from_args, models_from_specs
    from projectgen.config import Settings
    from projectgen.llm import ModelCallError
    from projectgen.llm.roles import ROLES
    from projectgen.llm.sampling import sampling_by_role
    from projectgen.runs import read_manifest, Run, RunParts

    args = build_parser().parse_args(["run", "kvstore", "--model", "openai:gpt-4o", "--base-url",
                                      "http://localhost:8000/v1", "--temperature", "0.2", "--max-output-tokens",
                                      "1000"])
    specs = model_specs_from_args(args)
    assert (specs["temperature"], specs["max_tokens"]) == ("0.2", "1000") and "top_p" not in specs
    models = models_from_specs(specs, None)
    assert sampling_by_role(models, ROLES)["coder"] == {"temperature": 0.2, "top_p": 1.0, "max_tokens": 1000}
    # A run records what its models send before the first call (here refused at once: nothing listens there).
    task = load_task(example_task_path("kvstore"))
    out = tmp_path / "run"
    with pytest.raises(ModelCallError):
        Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(measure_unit_tests=False), models=specs, settings=Settings(retries=0)), out, RunParts(models=models_from_specs({**specs, "base_url": "http://127.0.0.1:9/v1"}, task))).run()
    assert read_manifest(out).sampling["architect"] == {"temperature": 0.2, "top_p": 1.0, "max_tokens": 1000}


# SIGTERM takes the same path as SIGINT (main() maps it to KeyboardInterrupt): the slow suite runs it
@pytest.mark.parametrize("sig", ["SIGINT", pytest.param("SIGTERM", marks=pytest.mark.slow)])
def test_an_interrupted_run_says_how_to_resume_and_is_marked_interrupted(tmp_path: Path, env_cache: Path,
                                                                         sig: str, capsys) -> None:
    """Ctrl-C (or SIGTERM) mid-run: run.json says "interrupted" (not "running"), the CLI prints the
    `--resume DIR` command (the same command would now be refused as a non-empty --out), and that
    command finishes the run."""
    import signal
    import time

    out = tmp_path / "run"
    command = [sys.executable, "-m", "projectgen.cli", "run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}",
               "--out", str(out), "--cache-dir", str(env_cache), "--no-unit-tests"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=restore_sigint)
    events = out / "events.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if events.is_file() and len(events.read_text().splitlines()) >= 3:  # inside the first attempt
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(getattr(signal, sig))
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert f"continue it with `projectgen run --resume {out}`" in " ".join(err.split())
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "interrupted" and "--resume" in manifest["reason"]
    # the command it printed, in this process (the interrupted one is gone)
    assert main(["run", "--resume", str(out), "--cache-dir", str(env_cache)]) == 0, capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["status"] == "finished"


@pytest.mark.slow  # resume is in the default suite through tests/runs/test_resume.py
def test_a_replay_run_resumes_from_another_folder(tmp_path: Path, env_cache: Path) -> None:
    """run.json keeps the script and task paths absolute: `--resume` works whatever the current folder."""
    work = tmp_path / "work"
    (work / "scripts").mkdir(parents=True)
    (work / "scripts" / "demo.json").write_text(DEMO_SCRIPT.read_text())
    out = tmp_path / "run"
    first = subprocess.run([sys.executable, "-m", "projectgen.cli", "run", "kvstore", "--model",
                            "scripted:scripts/demo.json", "--out", str(out), "--cache-dir", str(env_cache),
                            "--no-unit-tests", "--attempts", "1"], capture_output=True, text=True, cwd=work,
                           timeout=600)
    assert first.returncode in (0, 1), first.stderr
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["models"]["default"] == f"scripted:{work / 'scripts' / 'demo.json'}"
    assert Path(manifest["task_path"]).is_absolute()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = subprocess.run([sys.executable, "-m", "projectgen.cli", "run", "--resume", str(out), "--cache-dir",
                            str(env_cache)], capture_output=True, text=True, cwd=elsewhere, timeout=600)
    assert again.returncode in (0, 1), again.stderr


def test_run_json_names_its_schema_version(tmp_path: Path) -> None:
    from projectgen.runs.folder import RunFolder
    from projectgen.runs.manifest import MANIFEST_SCHEMA_VERSION, RunManifest
    from projectgen.runs.folder import read_manifest

    RunFolder(tmp_path).lifecycle(RunManifest(run_id="r", task_path="t", task_id="t")).start()
    assert json.loads((tmp_path / "run.json").read_text())["schema_version"] == MANIFEST_SCHEMA_VERSION == 1
    (tmp_path / "run.json").write_text(json.dumps({"run_id": "r", "task_path": "t", "task_id": "t"}))
    assert read_manifest(tmp_path).schema_version == 1  # written before the version was recorded


def test_a_killed_run_is_shown_as_not_running(tmp_path: Path, env_cache: Path, capsys) -> None:
    """SIGKILL leaves run.json saying "running" (nothing can run at a SIGKILL): `trace` and `report`
    check that a process still holds the run and show the dead run's pid as not running, with the
    command that continues it; while the run is alive they show it running with its pid."""
    import signal
    import time

    out = tmp_path / "run"
    script = json.loads(DEMO_SCRIPT.read_text())
    script["delay_s"] = 1.0  # the run outlasts the `trace` below, however busy the machine
    (tmp_path / "slow.json").write_text(json.dumps(script))
    command = [sys.executable, "-m", "projectgen.cli", "run", "kvstore", "--model", f"scripted:{tmp_path / 'slow.json'}",
               "--out", str(out), "--cache-dir", str(env_cache), "--no-unit-tests"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events = out / "events.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if events.is_file() and len(events.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be killed"
    # `trace` and `report` read the run folder from this process, not the run's
    main(["trace", str(out)])
    alive = capsys.readouterr()
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert f"running (pid {process.pid})" in alive.out, alive.out + alive.err
    assert json.loads((out / "run.json").read_text())["status"] == "running"
    main(["trace", str(out)])
    trace = capsys.readouterr()
    flat = " ".join(trace.out.split())
    assert f"not running (pid {process.pid} ended without finishing" in flat, trace.out + trace.err
    assert f"projectgen run --resume {out}" in flat
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0, capsys.readouterr().err
    assert f"not running (pid {process.pid} ended" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.slow
def test_a_run_on_a_task_whose_environment_is_incomplete_says_so(shared_datasets: Path, tmp_path: Path,
                                                                  env_cache: Path, capsys) -> None:
    """DevBench geotext's copy lacks its cities file: the reference scores 0, and the run says why rather than
    leaving a bare 0 to be read as the model's."""
    code = main(["run", str(shared_datasets / "DevBench" / "geotext"), "--model", "reference", "--out",
                 str(tmp_path / "run"), "--iterations", "1,1,1", "--attempts", "1", "--cache-dir", str(env_cache)])
    assert code == 1
    out = " ".join(capsys.readouterr().out.split())
    assert ("environment incomplete: missing data file: this copy of the task lacks 1 published file(s) "
            "(geotext/data_file/cities15000.txt") in out
    assert "the hidden tests' score counts tests no output could pass here" in out
    report = json.loads((tmp_path / "run" / "unit_report.json").read_text())
    assert report["environment"]["incomplete"][0].startswith("environment incomplete: missing data file")
