"""`projectgen run --review` and `projectgen review DIR`: a run paused for a person's decision, continued
later by another process with --approve, --edit or --reject, with the demo's replay script as the model."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_AWAITING_REVIEW, EXIT_OK, EXIT_USAGE
from projectgen.datasets.examples import example_script_path
from projectgen.runs.locking import last_holder

DEMO_SCRIPT = example_script_path("kvstore.demo")
ARCHITECTURE_CALLS = [("architect", 1), ("architecture_judge", 1), ("architect", 2), ("architecture_judge", 2)]


def flat(text: str) -> str:
    return " ".join(text.split())


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def calls(out: Path) -> list[tuple[str, int]]:
    return [(row["role"], row["iteration"]) for row in jsonl(out / "usage.jsonl")]


def prompts_of(out: Path, role: str, iteration: int | None = None) -> list[str]:
    """The prompt texts of `role`'s calls (of one iteration), from usage.jsonl and prompts.jsonl."""
    texts = {row["id"]: "\n".join(m["content"] for m in row["messages"]) for row in jsonl(out / "prompts.jsonl")}
    return [texts[row["prompt_id"]] for row in jsonl(out / "usage.jsonl")
            if row["role"] == role and (iteration is None or row["iteration"] == iteration)]


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory, env_cache: Path) -> tuple[Path, subprocess.CompletedProcess, int]:
    """`projectgen run kvstore --review architecture --out D`, run once in its own process: (D, the
    finished process, its pid). Tests continue copies of D."""
    out = tmp_path_factory.mktemp("paused") / "D"
    process = subprocess.Popen([sys.executable, "-m", "projectgen.cli", "run", "kvstore", "--model",
                                f"scripted:{DEMO_SCRIPT}", "--review", "architecture", "--out", str(out),
                                "--cache-dir", str(env_cache)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    stdout, stderr = process.communicate(timeout=600)
    return out, subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), process.pid


def copy_of(paused: tuple[Path, subprocess.CompletedProcess, int], tmp_path: Path) -> Path:
    out = tmp_path / "D"
    shutil.copytree(paused[0], out)
    return out


def test_run_with_review_stops_awaiting_review_and_says_how_to_decide(paused) -> None:
    out, done, _ = paused
    assert done.returncode == EXIT_AWAITING_REVIEW == 3, done.stdout + done.stderr
    text = flat(done.stdout)
    assert "paused for review: the architecture of attempt 1 (iteration 2, accepted by its judge: score 9)" in text
    for command in (f"projectgen review {out}", f"projectgen review {out} --approve",
                    f"projectgen review {out} --json > tree.json", f"projectgen review {out} --edit tree.json",
                    f'projectgen review {out} --reject "what to change"'):
        assert command in done.stdout, command  # whole lines: copied as printed
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "awaiting-review" and manifest["review"] == ["architecture"]
    assert f"projectgen review {out}" in manifest["reason"]
    pending = json.loads((out / "review.json").read_text())
    assert pending["schema_version"] == 1
    assert (pending["stage"], pending["attempt"], pending["iteration"]) == ("architecture", 1, 2)
    assert pending["request"]["judge"]["accepted"] and pending["request"]["tree"]["project_name"] == "kvstore"
    assert "KVStore.purge_expired" in pending["request"]["diff"]  # what iteration 2 added to iteration 1's tree
    assert calls(out) == ARCHITECTURE_CALLS  # the stage's calls, and nothing after the pause
    assert not (out / "summary.json").exists() and not (out / "repository").exists()


def test_trace_and_report_show_the_run_awaiting_review(paused, tmp_path: Path, capsys) -> None:
    out = paused[0]
    assert main(["trace", str(out)]) == EXIT_OK, capsys.readouterr().err
    shown = flat(capsys.readouterr().out)
    assert f"awaiting-review (decide with `projectgen review {out}`)" in shown
    assert "awaiting review: architecture iteration 2" in shown
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == EXIT_OK, capsys.readouterr().err
    assert "awaiting-review" in (tmp_path / "report" / "report.md").read_text()


def test_review_shows_the_tree_its_diff_and_the_commands(paused, capsys) -> None:
    out = paused[0]
    assert main(["review", str(out)]) == EXIT_OK, capsys.readouterr().err
    shown = capsys.readouterr().out
    assert "the architecture of attempt 1 (iteration 2, accepted by its judge: score 9) awaits review" in shown
    assert "kvstore/store.py: KVStore, the key-value store" in shown  # the tree, as the prompts show it
    assert "changes since iteration 1" in shown and "+ method kvstore/store.py: KVStore.purge_expired" in shown
    assert f"projectgen review {out} --approve" in shown
    assert main(["review", str(out), "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == json.loads((out / "review.json").read_text())["request"]["tree"]
    assert json.loads((out / "run.json").read_text())["status"] == "awaiting-review"  # showing decides nothing


def test_approve_in_another_process_finishes_the_run_without_repeating_a_call(paused, tmp_path: Path,
                                                                             env_cache: Path) -> None:
    out = copy_of(paused, tmp_path)
    stopped_pid = paused[2]
    before = (out / "usage.jsonl").read_text()
    process = subprocess.Popen([sys.executable, "-m", "projectgen.cli", "review", str(out), "--approve",
                                "--cache-dir", str(env_cache)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == EXIT_OK, stdout + stderr
    # the process that stopped was gone before this one started; this one held the run folder
    assert process.pid != stopped_pid and last_holder(out) == process.pid
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
    architecture = summary["attempts"][0]["stages"]["architecture"]
    assert architecture["reviews"] == ["approve"] and architecture["scores"] == [6.0, 9.0]
    # nothing before the pause ran again: its calls are the same lines, none of its roles was asked again
    assert (out / "usage.jsonl").read_text().startswith(before)
    later = calls(out)[len(ARCHITECTURE_CALLS):]
    assert later and not [c for c in later if c[0] in ("architect", "architecture_judge")]
    keys = [row["key"] for row in jsonl(out / "calls.jsonl")]
    assert len(keys) == len(set(keys)) == len(calls(out))
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "finished" and not (out / "review.json").exists()
    events = [e["event"] for e in jsonl(out / "events.jsonl")]
    assert events.count("review_requested") == 1 and events[-1] == "run_end"


def test_reject_sends_the_feedback_to_the_architect_and_counts_as_an_iteration(paused, tmp_path: Path,
                                                                              env_cache: Path, capsys) -> None:
    out = copy_of(paused, tmp_path)
    feedback = "Move the value formatting of the CLI into its own module"
    code = main(["review", str(out), "--reject", feedback, "--cache-dir", str(env_cache)])
    assert code == EXIT_AWAITING_REVIEW  # the revision was accepted by its judge: the review comes again
    (prompt,) = prompts_of(out, "architect", 3)
    assert feedback in prompt and "Reviewer feedback to address" in prompt
    assert calls(out) == [*ARCHITECTURE_CALLS, ("architect", 3), ("architecture_judge", 3)]
    pending = json.loads((out / "review.json").read_text())
    assert pending["iteration"] == 3 and pending["request"]["diff"] == "no changes"  # the script's same tree
    assert "iteration 3" in flat(capsys.readouterr().out)
    assert main(["review", str(out), "--approve", "--cache-dir", str(env_cache)]) == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
    architecture = summary["attempts"][0]["stages"]["architecture"]
    assert architecture == {**architecture, "iterations": 3, "scores": [6.0, 9.0, 9.0],
                            "reviews": ["reject", "approve"]}
    events = jsonl(out / "events.jsonl")  # the trace keeps the decisions as reviews, not as judge verdicts
    assert [(r["action"], r["iteration"]) for e in events if e.get("node") == "review_architecture"
            for r in e["data"]["reviews"]] == [("reject", 2), ("approve", 3)]
    assert not [v for e in events for v in (e.get("data") or {}).get("verdicts") or [] if v["judge"] == "human"]


def test_an_edited_tree_is_what_the_skeleton_stage_receives(paused, tmp_path: Path, env_cache: Path,
                                                           capsys) -> None:
    out = copy_of(paused, tmp_path)
    assert main(["review", str(out), "--json"]) == EXIT_OK
    tree = json.loads(capsys.readouterr().out)
    tree["description"] = "EDITED BY A PERSON: a key-value store whose reviewer wrote this line."
    edited = tmp_path / "tree.json"
    edited.write_text(json.dumps(tree))
    assert main(["review", str(out), "--edit", str(edited), "--cache-dir", str(env_cache)]) == EXIT_OK
    skeleton_prompts = prompts_of(out, "skeleton")
    assert skeleton_prompts and all("EDITED BY A PERSON" in p for p in skeleton_prompts)
    assert not any("EDITED BY A PERSON" in p for p in prompts_of(out, "architect"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
    assert summary["attempts"][0]["stages"]["architecture"]["reviews"] == ["edit"]


@pytest.mark.parametrize("edit, message", [
    ({"project_name": "kvstore"}, "the edited tree is not valid: invalid SSAT: - files: missing required field"),
    ([1, 2], "an edit is a JSON object"),
    (None, "edit file not found"),
])
def test_a_bad_edit_is_one_line_and_changes_nothing(paused, tmp_path: Path, capsys, edit, message: str) -> None:
    out = copy_of(paused, tmp_path)
    before = {name: (out / name).read_bytes() for name in ("run.json", "review.json", "usage.jsonl", "events.jsonl")}
    path = tmp_path / "edit.json"
    if edit is not None:
        path.write_text(json.dumps(edit))
    assert main(["review", str(out), "--edit", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert {name: (out / name).read_bytes() for name in before} == before


def test_review_mistakes_are_one_line(paused, tmp_path: Path, capsys) -> None:
    out = copy_of(paused, tmp_path)
    for argv, message in (
            (["review", str(out), "--reject", "  "], "--reject needs feedback"),
            (["review", str(out), "--approve", "--reject", "x"], "not allowed with argument --approve"),
            (["review", str(tmp_path / "nowhere")], "run folder not found"),
            (["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--review", "code", "--out",
              str(tmp_path / "x")], "cannot review 'code': the stages that can be reviewed are architecture, skeleton"),
            (["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--review", "architecture", "--method",
              "direct", "--out", str(tmp_path / "x")], "method direct has no architecture stage to review"),
            (["run", "--resume", str(out), "--review", "skeleton"], "leave out --review")):
        assert main(argv) == EXIT_USAGE, argv
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert not (tmp_path / "x").exists()


def test_resume_without_a_decision_pauses_again_and_a_finished_run_has_nothing_to_review(
        paused, tmp_path: Path, env_cache: Path, capsys) -> None:
    out = copy_of(paused, tmp_path)
    assert main(["run", "--resume", str(out), "--cache-dir", str(env_cache)]) == EXIT_AWAITING_REVIEW
    assert calls(out) == ARCHITECTURE_CALLS
    assert f"projectgen review {out} --approve" in capsys.readouterr().out
    assert main(["review", str(out), "--approve", "--cache-dir", str(env_cache)]) == EXIT_OK
    capsys.readouterr()
    assert main(["review", str(out), "--approve"]) == EXIT_USAGE
    assert "no review is pending (the run is finished)" in capsys.readouterr().err


def test_both_stages_reviewed_and_a_skeleton_edit_reaches_the_coder(tmp_path: Path, env_cache: Path,
                                                                    capsys) -> None:
    out = tmp_path / "D"
    assert main(["run", "kvstore", "--model", f"scripted:{DEMO_SCRIPT}", "--review", "architecture,skeleton",
                 "--attempts", "1", "--out", str(out), "--cache-dir", str(env_cache)]) == EXIT_AWAITING_REVIEW
    assert main(["review", str(out), "--approve", "--cache-dir", str(env_cache)]) == EXIT_AWAITING_REVIEW
    pending = json.loads((out / "review.json").read_text())
    assert (pending["stage"], pending["iteration"]) == ("skeleton", 1)
    capsys.readouterr()
    assert main(["review", str(out)]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "the skeleton of attempt 1 (iteration 1" in shown and "── kvstore/store.py ──" in shown
    assert main(["review", str(out), "--json"]) == EXIT_OK
    files = json.loads(capsys.readouterr().out)
    assert set(files) == set(pending["request"]["skeleton"]) and "kvstore/store.py" in files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kvstore/store.py": "def broken(:\n"}))
    assert main(["review", str(out), "--edit", str(bad)]) == EXIT_USAGE
    assert "kvstore/store.py is not valid Python: line 1" in capsys.readouterr().err
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps({"kvstore/other.py": "x = 1\n"}))
    assert main(["review", str(out), "--edit", str(stranger)]) == EXIT_USAGE
    assert "kvstore/other.py is not a Python file of the tree" in capsys.readouterr().err
    edited = tmp_path / "skeleton.json"
    marked = files["kvstore/errors.py"] + "\n# REVIEWER NOTE: keep every error a KVStoreError\n"
    edited.write_text(json.dumps({"kvstore/errors.py": marked}))
    assert main(["review", str(out), "--edit", str(edited), "--cache-dir", str(env_cache)]) == EXIT_OK
    assert any("REVIEWER NOTE" in p for p in prompts_of(out, "coder"))
    summary = json.loads((out / "summary.json").read_text())
    stages = summary["attempts"][0]["stages"]
    assert stages["architecture"]["reviews"] == ["approve"] and stages["skeleton"]["reviews"] == ["edit"]
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
