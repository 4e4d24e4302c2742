"""Trace timelines, cost attribution, diffs, reports and the trace/report commands on hand-written run folders."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from projectgen.cli.inspect import add_commands as add_inspect_commands
from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.inspection import diffs, load_run, render_html, render_markdown, timeline, write_report
from projectgen.llm.pricing import PriceTable

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
MINI = "gpt-4o-mini"  # USD 0.15 in / 0.60 out per 1M tokens
XSS = "<script>alert('x')</script> fix toy/a.py"
DIFF = "--- a/toy/a.py\n+++ b/toy/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"


def _t(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def _node(t, node, attempt, stage=None, path=(), **data):
    return {"t": _t(t), "elapsed_s": t, "event": "node", "path": list(path), "node": node, "attempt": attempt,
            "stage": stage, "data": data}


def _verdict(judge, stage, iteration, score, accepted, check=None, files=(), feedback=""):
    return {"judge": judge, "stage": stage, "iteration": iteration, "score": score, "accepted": accepted,
            "check": check, "files": list(files), "feedback": feedback}


def _call(t, role, stage, iteration, attempt, tokens_in, tokens_out, model=MINI, target=None):
    return {"role": role, "stage": stage, "target": target, "iteration": iteration, "attempt": attempt,
            "model": model, "input_tokens": tokens_in, "output_tokens": tokens_out, "tokens_estimated": False,
            "latency_s": 0.2, "elapsed_s": 0.2, "attempts": 1, "error": None, "timestamp": _t(t)}


EVENTS = [
    {"t": _t(0), "elapsed_s": 0.0, "event": "run_start", "run_id": "run42", "task_id": "toy"},           # 0
    _node(0.1, "plan_attempt", 1),                                                                       # 1
    _node(0.2, "retrieve_knowledge", 1, knowledge_used={"success": [], "failure": []}),                  # 2
    _node(1.0, "architect", 1, "architecture", iterations={"architecture": 1}, ssat={"files": 1}),       # 3
    _node(2.0, "judge_architecture", 1, "architecture",                                                  # 4
          verdicts=[_verdict("architecture_judge", "architecture", 1, 9.0, True)]),
    {"t": _t(2.1), "elapsed_s": 2.1, "event": "stage_end", "path": ["run_attempt"], "node": "architecture",
     "attempt": 1, "stage": "architecture", "data": {"iterations": {"architecture": 1}}},                 # 5
    _node(2.2, "plan_code", 1, "code", iterations={"code": 1}, layer=0),                                 # 6
    _node(3.0, "fill_file", 1, "code", repository=[{"path": "toy/a.py", "lines": 2}]),                   # 7
    _node(4.0, "judge_code", 1, "code", verdicts=[_verdict(                                              # 8
        "code_judge", "code", 1, 4.0, False, {"passed": 1, "total": 2, "status": "failed", "failing": ["t::x"]},
        ["toy/a.py"], XSS)]),
    _node(4.1, "plan_code", 1, "code", iterations={"code": 2}),                                          # 9
    _node(5.0, "repair_file", 1, "code", repository=[{"path": "toy/a.py", "lines": 2, "diff": DIFF}],    # 10
          edits=[{"path": "toy/a.py", "iteration": 2, "format": "whole", "well_formed": True, "failed": 0,
                  "feedback": ""}]),
    _node(6.0, "judge_code", 1, "code", verdicts=[_verdict(                                              # 11
        "code_judge", "code", 2, 10.0, True, {"passed": 2, "total": 2, "status": "passed", "failing": []})]),
    {"t": _t(6.1), "elapsed_s": 6.1, "event": "stage_end", "path": ["run_attempt"], "node": "code",
     "attempt": 1, "stage": "code", "data": {"iterations": {"architecture": 1, "code": 2}}},              # 12
    _node(7.0, "score_attempt", 1, score=1.0, unit={"passed": 3, "total": 4, "pass_rate": 0.75}),        # 13
    _node(8.0, "learn", 1, attempts=[{"attempt": 1, "score": 1.0, "best_score": 1.0, "best_attempt": 1,  # 14
                                       "knowledge_added": ["success"]}], best={"attempt": 1, "score": 1.0}),
    _node(8.1, "plan_attempt", 2),                                                                       # 15
    _node(8.2, "retrieve_knowledge", 2, knowledge_used={"success": [                                     # 16
        {"attempt": 1, "score": 1.0, "similarity": 0.5, "text": "keep <b>toy/a.py</b> | small"}], "failure": []}),
    _node(9.0, "architect", 2, "architecture", iterations={"architecture": 1}, ssat={"files": 1}),       # 17
    _node(9.5, "judge_architecture", 2, "architecture",                                                  # 18
          verdicts=[_verdict("architecture_judge", "architecture", 1, 7.0, False, feedback="add g()")]),
    _node(10.0, "score_attempt", 2, score=0.5, unit={"passed": 2, "total": 4, "pass_rate": 0.5}),        # 19
    _node(10.5, "learn", 2, attempts=[{"attempt": 2, "score": 0.5, "best_score": 1.0, "best_attempt": 1}]),  # 20
    _node(10.8, "plan_attempt", 3),                                                                      # 21
    _node(10.9, "finish", 3, final={"source": "best", "attempt": 1, "score": 1.0}),                      # 22
    {"t": _t(11.0), "elapsed_s": 11.0, "event": "run_end", "final": {"source": "best", "attempt": 1, "score": 1.0},
     "stopped": None},                                                                                   # 23
]

CALLS = [
    _call(0.5, "architect", "architecture", 1, 1, 1000, 500),                   # -> 3: 0.00015 + 0.0003 = 0.00045
    _call(1.5, "architecture_judge", "architecture", 1, 1, 2000, 100),          # -> 4: 0.0003 + 0.00006 = 0.00036
    _call(2.5, "coder", "code", 1, 1, 3000, 1000, target="toy/a.py"),           # -> 7: 0.00045 + 0.0006 = 0.00105
    _call(3.2, "lint_helper", "code", 1, 1, 100, 100),                          # -> 8 by time: 0.000015 + 0.00006
    _call(3.5, "code_judge", "code", 1, 1, 500, 50),                            # -> 8: 0.000075 + 0.00003
    _call(4.5, "coder", "code", 2, 1, 1000, 1000, target="toy/a.py"),           # -> 10: 0.00015 + 0.0006 = 0.00075
    _call(5.5, "code_judge", "code", 2, 1, 500, 50),                            # -> 11: 0.000105
    _call(7.5, "knowledge", "knowledge", 1, None, 800, 200),                    # -> 14 by key: 0.00012 + 0.00012
    _call(8.5, "architect", "architecture", 1, 2, 1000, 500, model="mystery"),  # -> 17: no price
    _call(9.2, "architecture_judge", "architecture", 1, 2, 2000, 100),          # -> 18: 0.00036
    _call(12.0, "coder", "code", 1, 2, 10, 10),                                 # after the last event: unattributed
]

SUMMARY = {
    "task_id": "toy", "run_id": "run42", "models": {"default": MINI}, "selection": "check", "oracle": False,
    "attempts": [
        {"attempt": 1, "reused": False, "score": 1.0, "unit": {"passed": 3, "total": 4, "pass_rate": 0.75},
         "check": {"passed": 2, "total": 2, "status": "passed", "failing": []},
         "stages": {"architecture": {"iterations": 1, "scores": [9.0], "accepted": True},
                    "code": {"iterations": 2, "scores": [4.0, 10.0], "accepted": True}},
         "improved": True, "best_score": 1.0, "best_attempt": 1, "knowledge_used": {"success": [], "failure": []},
         "knowledge_added": ["success"], "tokens": {"total_tokens": 0}},
        {"attempt": 2, "reused": False, "score": 0.5, "unit": {"passed": 2, "total": 4, "pass_rate": 0.5},
         "check": {"passed": 1, "total": 2, "status": "failed", "failing": ["t::x"]},
         "stages": {"architecture": {"iterations": 1, "scores": [7.0], "accepted": False}},
         "improved": False, "best_score": 1.0, "best_attempt": 1,
         "knowledge_used": {"success": [{"attempt": 1, "text": "keep"}], "failure": []}, "knowledge_added": []},
    ],
    "final": {"source": "best", "attempt": 1, "score": 1.0}, "stopped": None, "budget_limited": False,
    "duration_s": 11.0, "settings": {"threshold": 8.0},
}


def _jsonl(path: Path, items) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


@pytest.fixture
def run_dir(tmp_path) -> Path:
    root = tmp_path / "run"
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"run_id": "run42", "task_id": "toy", "task_path": "/toy",
                                               "attempt_settings": {"selection": "check"}, "status": "finished"}))
    _jsonl(root / "events.jsonl", EVENTS)
    (root / "events.jsonl").open("a").write('{"t": "torn line')  # a line torn by a kill is skipped
    _jsonl(root / "usage.jsonl", CALLS)
    (root / "summary.json").write_text(json.dumps(SUMMARY))
    repo = root / "repository" / "toy"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text('"""Toy."""\n\n\ndef f():\n    return 2\n')
    return root


# --------------------------------------------------------------------------- timeline


def test_timeline_rows(run_dir):
    run = load_run(run_dir)
    assert run.kind == "livecoder" and run.task_id == "toy" and run.run_id == "run42"
    assert len(run.rows) == len(EVENTS)
    architect = run.rows[3]
    assert (architect.attempt, architect.stage, architect.node, architect.iteration) == (1, "architecture",
                                                                                         "architect", 1)
    assert architect.offset_s == 1.0
    assert architect.duration_s == 0.5  # from its call's start (0.5) to its event (1.0)
    assert architect.detail == "tree: 1 file"
    judge = run.rows[8]
    assert (judge.scores, judge.accepted, judge.check, judge.iteration) == ([4.0], False, (1, 2), 1)
    assert "to fix: toy/a.py" in judge.detail and XSS in judge.feedback
    repair = run.rows[10]
    assert repair.iteration == 2 and "toy/a.py (2 lines, +1 -1)" in repair.detail
    assert run.rows[9].iteration == 2 and run.rows[7].iteration == 1
    assert run.rows[5].event == "stage_end" and run.rows[5].duration_s == pytest.approx(1.9)  # 0.2 -> 2.1
    assert run.rows[22].attempt is None and run.rows[21].attempt is None  # past the last attempt
    assert "final: best attempt 1" in run.rows[23].detail
    assert [r.node for r in timeline(run, attempt=2, stage="architecture")] == ["architect", "judge_architecture"]
    assert [(r.attempt, r.node) for r in timeline(run, stage="knowledge")] == [
        (1, "retrieve_knowledge"), (1, "learn"), (2, "retrieve_knowledge")]
    first = timeline(run, attempt=1)
    assert first[0].event == "run_start" and all(r.attempt in (1, None) for r in first)


def test_cost_attribution_by_key_then_by_time(run_dir):
    run = load_run(run_dir, prices=PriceTable.default())
    rows = run.rows
    assert [c.role for c in rows[3].calls] == ["architect"]
    assert rows[3].input_tokens == 1000 and rows[3].output_tokens == 500
    assert rows[3].cost.value == pytest.approx(0.00045)
    assert rows[4].cost.value == pytest.approx(0.00036)
    assert rows[7].cost.value == pytest.approx(0.00105)
    # the judge's own call by key, plus the untagged helper call that started before it ended, by time
    assert sorted(c.role for c in rows[8].calls) == ["code_judge", "lint_helper"]
    assert rows[8].calls_by_time == 1
    assert rows[8].cost.value == pytest.approx(0.000105 + 0.000075)
    assert rows[10].cost.value == pytest.approx(0.00075)
    # the knowledge extraction of attempt 1 (stage knowledge, iteration 1, no attempt tag) goes to its learn node
    assert [c.role for c in rows[14].calls] == ["knowledge"] and rows[14].calls_by_time == 0
    assert rows[14].cost.value == pytest.approx(0.00024)
    # an unknown model's cost is n/a, never invented
    assert rows[17].cost.value is None and rows[17].cost.label() == "n/a"
    assert [c.timestamp for c in run.unattributed] == [T0 + timedelta(seconds=12)]
    attempts = {a.attempt: a for a in run.attempts}
    assert set(attempts) == {1, 2}
    one = attempts[1]
    assert one.tokens.total_tokens == 1500 + 2100 + 4000 + 200 + 550 + 2000 + 550 + 1000
    assert one.cost.value == pytest.approx(0.00045 + 0.00036 + 0.00105 + 0.000075 + 0.000105 + 0.00075 + 0.000105
                                           + 0.00024)
    two = attempts[2]
    assert two.cost.unpriced_calls == 1 and two.cost.usd == pytest.approx(0.00036 + 0.00001 * 0.15 + 0.00001 * 0.6)
    assert two.knowledge_used == 1 and two.best_attempt == 1
    assert one.duration_s == pytest.approx(7.9)  # first (0.1) to last (8.0) node event of attempt 1


def test_knowledge_rows(run_dir):
    run = load_run(run_dir)
    assert len(run.knowledge) == 1
    entry = run.knowledge[0]
    assert (entry.attempt, entry.kind, entry.source_attempt, entry.score, entry.similarity) == (2, "success", 1,
                                                                                                1.0, 0.5)
    assert "keep <b>toy/a.py</b>" in entry.text
    assert run.rows[16].detail == "knowledge given: 1 success"


def test_diffs_between_iterations(run_dir):
    run = load_run(run_dir)
    found = diffs(run)
    assert len(found) == 1
    entry = found[0]
    assert (entry.attempt, entry.stage, entry.iteration, entry.kind, entry.path) == (1, "code", 2, "repository",
                                                                                     "toy/a.py")
    assert (entry.added, entry.removed) == (1, 1) and entry.diff == DIFF
    assert diffs(run, attempt=2) == [] and diffs(run, stage="architecture") == []


# --------------------------------------------------------------------------- reports


def test_markdown_report_tables(run_dir):
    text = render_markdown(load_run(run_dir))
    assert "| attempt | score | check tests |" in text
    assert "| 1 | 1.00 | 2/2 | 3/4 |" in text
    assert "| 2 | 0.50 | 1/2 | 2/4 |" in text
    assert "| gpt-4o-mini | model |" in text and "| mystery | model |" in text and "n/a (no price)" in text
    assert "| code | 2 | code_judge | 10.0 | yes | 2/2 |" in text
    assert "<script>" not in text and "&lt;script&gt;" in text  # feedback escaped in Markdown too
    assert "keep &lt;b&gt;toy/a.py&lt;/b&gt; \\| small" in text  # a pipe cannot break the table
    assert "maintainability index" in text
    assert "final choice**: attempt 1 (best), score 1.00 (check-test pass rate)" in text


def test_html_report_escapes_and_draws(run_dir, tmp_path):
    md_path, html_path = write_report(run_dir, tmp_path / "out")
    assert md_path == tmp_path / "out" / "report.md" and md_path.exists()
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()  # judge feedback is untrusted text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;b&gt;toy/a.py&lt;/b&gt;" in page
    assert page.count("<svg") >= 4 and "Score per attempt" in page and "Judge scores per stage iteration" in page
    assert "best so far" in page and "Tokens and cost per stage" in page
    # self-contained: nothing is fetched
    assert "src=" not in page and "<link" not in page and "@import" not in page
    assert "https://" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "ORACLE" not in page and "Scripted replay" not in page
    assert '<span class="add">+    return 2</span>' in page  # the diff between iterations
    # default output folder is the run folder
    assert write_report(run_dir)[1] == run_dir / "report.html"


def test_scripted_and_oracle_runs_are_labelled(run_dir):
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.update(selection="unit", oracle=True)
    (run_dir / "summary.json").write_text(json.dumps(summary))
    _jsonl(run_dir / "usage.jsonl", [{**c, "model": "scripted:toy replay"} for c in CALLS])
    run = load_run(run_dir)
    page, text = render_html(run), render_markdown(run)
    assert "Oracle setting" in page and "ORACLE" in page and "Oracle setting" in text
    assert "Scripted replay" in page and "scripted replay (not a model): toy replay" in text
    assert run.cost.label() == "$0"


def test_the_report_says_what_reached_the_generators_of_the_hidden_tests(run_dir):
    """With check-test feedback and selection by the hidden tests (the paper profile on DevBench), the knowledge
    agent was given their pass rate: the report says so, and says nothing of it where it was not given."""
    def feedback_line(selection: str, knowledge: bool) -> str:
        manifest = json.loads((run_dir / "run.json").read_text())
        manifest["attempt_settings"] = {"selection": selection, "success_knowledge": knowledge,
                                        "failure_knowledge": knowledge}
        (run_dir / "run.json").write_text(json.dumps(manifest))
        summary = json.loads((run_dir / "summary.json").read_text())
        summary.update(selection=selection, oracle=selection == "unit", settings={"feedback_suite": "check"})
        (run_dir / "summary.json").write_text(json.dumps(summary))
        [line] = [line for line in render_markdown(load_run(run_dir)).splitlines() if "execution feedback" in line]
        return line

    assert "knowledge agent was also given each attempt's hidden unit-test pass rate" in feedback_line("unit", True)
    for selection, knowledge in (("unit", False), ("check", True)):  # no knowledge call, or nothing hidden scored
        assert feedback_line(selection, knowledge).endswith("the visible check tests' output only "
                                                            "(settings.feedback_suite)")


def test_the_report_names_the_fidelity_settings_the_run_recorded(run_dir):
    """A run of a published benchmark takes the paper profile without being asked: its report says so, with every
    setting docs/fidelity.md names, as the run recorded them (the report once named only the selection)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.update(settings=Settings(profile="paper").model_dump(),
                   attempt_settings=AttemptSettings(profile="paper").model_dump())
    (run_dir / "summary.json").write_text(json.dumps(summary))
    text = render_markdown(load_run(run_dir))
    line = next(line for line in text.splitlines() if "settings (docs/fidelity.md)" in line)
    assert "profile paper; threshold 8.0, threshold_rule exceeds, skeleton_threshold_rule at_least, gamma 2" in line
    for named in ("architecture_criteria paper", "skeleton_review paper", "stage_memory distilled",
                  "carry_reflections True", "edit_format whole", "knowledge_after_last True"):
        assert named in line


def test_injected_faults_are_said_in_the_banner_and_long_model_cells_wrap(run_dir):
    """A run made with --inject-faults says so at the top of both reports, not only in the models
    table's description column; that table keeps to the page (fixed layout, long cells wrap)."""
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["models"] = {"default": "openai:gpt-4o-mini", "faults": "server_error=0.3,seed=1"}
    (run_dir / "run.json").write_text(json.dumps(manifest))
    run = load_run(run_dir)
    page, text = render_html(run), render_markdown(run)
    assert '<div class="banner">Fault injection: faults were injected into the model calls (server_error=0.3,' \
           'seed=1)' in page
    assert text.index("> **Fault injection:** faults were injected") < text.index("## Attempts")
    assert '<table class="models">' in page and "table.models{table-layout:fixed}" in page
    header = page[page.index('<table class="models">'):].split("</thead>")[0]
    assert header.startswith('<table class="models"><thead><tr><th class="wrap">model</th>')
    manifest["models"] = {"default": "openai:gpt-4o-mini"}
    (run_dir / "run.json").write_text(json.dumps(manifest))
    assert "Fault injection" not in render_html(load_run(run_dir))


def test_a_single_pass_run_with_a_trace_is_a_pipeline_run_not_livecoder_attempts(run_dir):
    manifest = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**manifest, "method": "single-pass"}))  # run_project's folder
    run = load_run(run_dir)
    assert run.kind == "projectgen" and run.has_trace and len(run.rows) == len(EVENTS)


def test_plain_projectgen_run_folder(tmp_path):
    root = tmp_path / "pg"
    root.mkdir()
    (root / "summary.json").write_text(json.dumps({
        "task_id": "toy", "models": {"coder": "scripted model (demo)"}, "settings": {"threshold": 8.0},
        "stages": {"architecture": {"iterations": 1, "accepted": True, "scores": [9.0], "checks": []},
                   "code": {"iterations": 2, "accepted": True, "scores": [6.0, 10.0],
                            "checks": [{"passed": 1, "total": 2, "status": "failed", "failing": []},
                                       {"passed": 2, "total": 2, "status": "passed", "failing": []}]}},
        "unit_tests": {"passed": 4, "total": 4, "pass_rate": 1.0}, "duration_s": 3.0}))
    _jsonl(root / "usage.jsonl", [{**c, "attempt": None} for c in CALLS[:3]])
    run = load_run(root)
    assert run.kind == "projectgen" and not run.has_trace and run.rows == []
    assert [(v["stage"], v["iteration"], v["score"], v["check"]) for v in run.judge_iterations()] == [
        ("architecture", 1, 9.0, None), ("code", 1, 6.0, (1, 2)), ("code", 2, 10.0, (2, 2))]
    assert list(run.stage_totals()) == ["architecture", "code"]
    (only,) = run.attempts
    assert only.attempt is None and only.score == 1.0 and only.tokens.total_tokens == 1500 + 2100 + 4000
    md_path, html_path = write_report(root)
    assert "No trace events recorded" in md_path.read_text() and "<svg" in html_path.read_text()


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "run folder not found"),
    (lambda p: p, "not a run folder"),
])
def test_not_a_run_folder(tmp_path, make, message):
    with pytest.raises(ProjectGenError, match=message):
        load_run(make(tmp_path))


def test_broken_summary_is_a_one_line_error(run_dir):
    (run_dir / "summary.json").write_text("{not json")
    with pytest.raises(ProjectGenError, match="summary.json: not valid JSON"):
        load_run(run_dir)


# --------------------------------------------------------------------------- commands


def _command(argv):
    parser = argparse.ArgumentParser(prog="projectgen")
    add_inspect_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_trace_command(run_dir, capsys):
    assert _command(["trace", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "toy · run run42 · LiveCoder attempts" in out
    assert "judge_code" in out and "1/2" in out and "repair_file" in out and "$0.0004" in out
    assert "knowledge given to attempts" in out
    assert "1 model call(s) matched no trace event" in out
    assert _command(["trace", str(run_dir), "--diff"]) == 0
    out = capsys.readouterr().out
    assert "attempt 1 · code iteration 2 · toy/a.py (+1 -1)" in out and "+    return 2" in out
    assert "judge_code" not in out
    assert _command(["trace", str(run_dir), "--attempt", "1", "--stage", "code", "--calls"]) == 0
    out = capsys.readouterr().out
    assert "lint_helper" in out and "(by time)" in out and "architect " not in out
    with pytest.raises(ProjectGenError, match="no attempt 9 in this run"):
        _command(["trace", str(run_dir), "--attempt", "9"])


def test_a_one_pass_method_run_by_the_attempts_graph_is_named_by_its_method(run_dir, tmp_path, capsys):
    summary = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").write_text(json.dumps({**summary, "method": "projectgen"}))
    assert _command(["trace", str(run_dir)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "ProjectGen (one pass with its judges)" in header and "LiveCoder" not in header
    md_path, _ = write_report(run_dir, tmp_path / "rep")
    assert "- **kind**: ProjectGen (one pass with its judges)\n" in md_path.read_text()


def _timeline_lines(run_dir: Path, width: int) -> list[str]:
    from rich.console import Console

    from projectgen.cli.inspect import _print_timeline

    console = Console(width=width, record=True, file=open(os.devnull, "w"))
    _print_timeline(console, timeline(load_run(run_dir)))
    return console.export_text().splitlines()


def test_trace_table_is_readable_in_a_100_column_terminal(run_dir):
    lines = _timeline_lines(run_dir, 100)
    assert max(len(line) for line in lines) <= 100
    # the detail column would be a few characters wide here: each detail is a line of its own, whole
    assert "    attempt 1: score 1.00, best 1.00 (attempt 1), knowledge added: success" in lines
    assert "    final: best attempt 1 (score 1.00)" in lines
    assert lines[0].split() == ["t", "(s)", "att", "stage", "node", "it", "judge", "check", "tokens", "cost",
                                "dur", "(s)"]


def test_trace_table_has_a_detail_column_when_there_is_room_and_no_empty_columns(run_dir, tmp_path):
    lines = _timeline_lines(run_dir, 200)
    assert lines[0].split()[-1] == "detail" and max(len(line) for line in lines) <= 200
    assert any("learn" in line and "knowledge added: success" in line for line in lines)
    (run_dir / "usage.jsonl").write_text("")  # no calls: no tokens or cost column
    assert "tokens" not in _timeline_lines(run_dir, 200)[0] and "cost" not in _timeline_lines(run_dir, 200)[0]


def test_piped_trace_is_folded_to_a_readable_width(run_dir):
    env = {**os.environ, "COLUMNS": "1000"}
    out = subprocess.run([sys.executable, "-m", "projectgen", "trace", str(run_dir)], capture_output=True,
                         text=True, env=env, check=True).stdout
    assert "judge_code" in out and max(len(line) for line in out.splitlines()) <= 160


def test_trace_json(run_dir, capsys):
    assert _command(["trace", str(run_dir), "--json", "--calls"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format_version"] == 1 and document["run"]["task_id"] == "toy"
    assert document["run"]["cost_usd"] is None  # one call has no price: no partial sum passed off as the cost
    assert document["run"]["unpriced_calls"] == 1 and document["run"]["priced_cost_usd"] > 0
    rows = document["rows"]
    assert [row["node"] for row in rows] == [row.node for row in load_run(run_dir).rows]
    judge = rows[8]
    assert judge["judge_scores"] == [4.0] and judge["check"] == {"passed": 1, "total": 2}
    assert judge["accepted"] is False and judge["calls"] == 2 and judge["input_tokens"] == 600
    assert judge["feedback"] == XSS  # run data as recorded: the reader escapes it for its display
    assert [call["number"] for call in document["calls"]] == list(range(1, len(CALLS) + 1))
    assert document["calls"][3]["matched_by_time"] is True and document["calls"][3]["row"] == 8
    assert document["calls"][-1]["row"] is None and document["unattributed_calls"] == 1
    assert document["knowledge"][0]["text"].startswith("keep")
    assert _command(["trace", str(run_dir), "--json", "--attempt", "2", "--stage", "architecture"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {(row["attempt"], row["stage"]) for row in document["rows"]} == {(2, "architecture")}
    assert "calls" not in document
    with pytest.raises(ProjectGenError, match="leave out --diff and --call"):
        _command(["trace", str(run_dir), "--json", "--diff"])


def test_trace_and_report_show_the_integrity_flags_its_test_reports_recorded(run_dir, tmp_path, capsys):
    from projectgen.evaluation.integrity_flags import IntegrityFlag
    from projectgen.evaluation.report import TestReport

    assert _command(["trace", str(run_dir)]) == 0
    assert "integrity flags" not in capsys.readouterr().out  # none recorded: nothing said
    flag = IntegrityFlag(kind="ctypes", path="toy/a.py", line=3, excerpt="import ctypes")
    TestReport(task_id="toy", suite="unit", integrity_flags=[flag]).write_json(run_dir / "unit_report.json")
    assert _command(["trace", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "integrity flags: 1" in out and "ctypes" in out and "toy/a.py:3  import ctypes" in out
    md_path, _ = write_report(run_dir, tmp_path / "rep")
    assert "ctypes 1: known gaming moves in the code under test" in md_path.read_text()


def test_trace_shows_untrusted_text_literally(run_dir, capsys):
    events = [dict(e) for e in EVENTS]
    events[8] = _node(4.0, "judge_code", 1, "code", verdicts=[_verdict(
        "code_judge", "code", 1, 4.0, False, feedback="[bold red]boom[/bold red] \x1b[2J cleared?")])
    _jsonl(run_dir / "events.jsonl", events)
    assert _command(["trace", str(run_dir), "--attempt", "1", "--stage", "code"]) == 0
    out = capsys.readouterr().out
    assert "[bold red]boom[/bold red]" in out  # not read as rich markup
    assert "\x1b" not in out and "\\x1b[2J" in out  # a terminal escape is shown, not sent


def test_trace_command_with_a_price_file(run_dir, tmp_path, capsys):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models.mystery]\ninput = 1000\noutput = 0\n')
    assert _command(["trace", str(run_dir), "--attempt", "2", "--prices", str(prices)]) == 0
    assert "$1.00" in capsys.readouterr().out  # 1000 tokens at $1000 per 1M


def test_report_command(run_dir, tmp_path, capsys):
    assert _command(["report", str(run_dir), "--out", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "rep" / "report.md") in out and str(tmp_path / "rep" / "report.html") in out
    with pytest.raises(ProjectGenError, match="not a run folder"):
        _command(["report", str(tmp_path / "rep")])
    (tmp_path / "file").write_text("x")
    with pytest.raises(ProjectGenError, match="not a folder"):
        _command(["report", str(run_dir), "--out", str(tmp_path / "file")])


# --------------------------------------------------------------------------- the page in a browser

CHROMIUM = Path("/usr/bin/chromium")


def _png_size_and_distinct_rows(path: Path) -> tuple[int, int, int]:
    """Width, height and how many distinct scanlines a (non-interlaced, 8-bit) PNG has; no imaging library."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, idat = 8, {}, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IDAT":
            idat += body
        else:
            chunks.setdefault(kind, body)
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and color in (2, 6)
    raw = zlib.decompress(idat)
    stride = width * (3 if color == 2 else 4) + 1
    # rows are filtered; unfiltered content differs, but identical filtered rows mean identical content runs
    rows = {raw[i * stride:(i + 1) * stride] for i in range(height)}
    return width, height, len(rows)


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (apt-get install -y chromium)")
def test_html_report_renders_in_headless_chromium(run_dir, tmp_path):
    _, html_path = write_report(run_dir, tmp_path / "out")
    png = tmp_path / "report.png"
    profile = tmp_path / "profile"
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               f"--screenshot={png}", "--window-size=1280,2000", html_path.resolve().as_uri()]
    env = {**os.environ, "HOME": str(tmp_path)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert png.exists(), result.stderr[-2000:]
    width, height, distinct = _png_size_and_distinct_rows(png)
    assert (width, height) == (1280, 2000)
    assert distinct > 200  # a blank page has a handful of distinct rows; charts and tables have hundreds
    shutil.rmtree(profile, ignore_errors=True)


def test_review_events_read_as_decisions_in_the_timeline() -> None:
    """A paused run's `review_requested` marker, the decision the next process resumed with, and the review
    node's records (a rejection with its feedback, an edited tree, edited skeleton files) in one line each;
    a person's rejection verdict is not a judge score."""
    from projectgen.inspection.rows import timeline_rows

    t = "2026-01-01T00:00:0{}+00:00"
    events = [
        {"t": t.format(0), "event": "review_requested", "attempt": 1, "stage": "architecture", "iteration": 2},
        {"t": t.format(1), "event": "run_resumed", "run_id": "r", "review": "reject", "stage": "architecture",
         "iteration": 2},
        {"t": t.format(2), "event": "node", "node": "review_architecture", "stage": "architecture", "attempt": 1,
         "data": {"reviews": [{"stage": "architecture", "iteration": 2, "action": "reject",
                               "feedback": "split the cli"}]}},
        {"t": t.format(3), "event": "node", "node": "review_architecture", "stage": "architecture", "attempt": 1,
         "data": {"reviews": [{"stage": "architecture", "iteration": 3, "action": "edit", "edited": ["(tree)"]}]}},
        {"t": t.format(4), "event": "node", "node": "review_skeleton", "stage": "skeleton", "attempt": 1,
         "data": {"reviews": [{"stage": "skeleton", "iteration": 1, "action": "edit", "edited": ["a.py", "b.py"]}]}},
    ]
    details = [row.detail for row in timeline_rows(events)]
    assert details == ["awaiting review: architecture iteration 2",
                       "run_id=r; review of the architecture (iteration 2): reject",
                       "review: reject (split the cli)", "review: edit (the tree)",
                       "review: edit (2 file(s): a.py, b.py)"]
    assert all(row.scores == [] for row in timeline_rows(events))


def test_a_run_awaiting_review_says_how_to_decide(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"run_id": "r", "task_path": "t", "task_id": "t",
                                                   "status": "awaiting-review", "review": ["architecture"]}))
    assert load_run(tmp_path).status == f"awaiting-review (decide with `projectgen review {tmp_path}`)"


def test_trace_into_a_closed_pipe_ends_quietly(run_dir):
    """`projectgen trace DIR | head -1`: the reader leaving is not a bug (no traceback, exit 141 as a shell says)."""
    process = subprocess.Popen([sys.executable, "-m", "projectgen", "trace", str(run_dir), "--json", "--calls"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # gone before anything is written
    stderr = process.stderr.read().decode()
    assert process.wait() == 141 and stderr == ""
