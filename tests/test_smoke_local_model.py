"""The checks of scripts/smoke_local_model.py (`make smoke-local-model`), on folders and logs written here:
each must fail on what it is there to catch (the smoke itself needs llama-cpp-python and is not run here)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "smoke_local_model.py"


@pytest.fixture(scope="module")
def smoke() -> ModuleType:
    spec = importlib.util.spec_from_file_location("smoke_local_model", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def record(**fields: object) -> dict[str, object]:
    base = {"model": "smollm2", "input_tokens": 900, "output_tokens": 200, "tokens_estimated": False,
            "error": None, "attempts": 1, "finish_reason": "stop"}
    return {**base, **fields}


def test_usage_checks_pass_server_counted_calls_and_catch_estimates_other_names_and_long_replies(smoke) -> None:
    good = [record(), record(error="OpenAIInvalidRequestError: Error code: 400 - too long", input_tokens=0,
                             output_tokens=0)]
    assert all(check.ok for check in smoke.usage_checks("run", good, cap=1024))
    failed = {check.name for check in smoke.usage_checks("run", [record(tokens_estimated=True)], cap=None)
              if not check.ok}
    assert failed == {"run: every answered call has the server's token counts"}
    failed = {check.name for check in smoke.usage_checks("run", [record(model="gpt-4o")], cap=None) if not check.ok}
    assert failed == {"run: calls recorded under the served name"}
    failed = {check.name for check in smoke.usage_checks("run", [record(output_tokens=7000)], cap=1024)
              if not check.ok}
    assert failed == {"run: no reply longer than the cap (1024 tokens)"}
    assert not smoke.usage_checks("run", [], cap=None)[0].ok  # no call recorded at all
    broken = record(error="RuntimeError: Event loop is closed", input_tokens=0, output_tokens=0)
    failed = [check for check in smoke.usage_checks("refine", [record(), broken], cap=None) if not check.ok]
    assert [check.name for check in failed] == [
        "refine: every failed call was refused by the server or the network, not broken in projectgen"]
    assert "Event loop is closed" in failed[0].detail
    unreachable = record(error="ModelCallError: APIConnectionError: Connection error.", input_tokens=0)
    assert all(check.ok for check in smoke.usage_checks("run", [record(), unreachable], cap=None))


def write_run(folder: Path, *, status: str, reason: str | None, stages: dict, stopped: str | None) -> None:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"status": status, "reason": reason}))
    (folder / "summary.json").write_text(json.dumps({"status": status, "reason": reason, "stopped": None,
                                                     "attempts": [{"attempt": 1, "stages": stages,
                                                                   "stopped": stopped}]}))


def test_run_statuses_accept_a_stage_not_reached_only_with_the_reason(smoke, tmp_path: Path) -> None:
    architecture = {"architecture": {"iterations": 2, "accepted": False}}
    write_run(tmp_path / "stopped", status="finished", reason=None, stages=architecture,
              stopped="architecture: no usable tree after 2 iteration(s): No JSON found in your reply.")
    checks = smoke.run_statuses(tmp_path / "stopped")
    assert all(check.ok for check in checks)
    assert "skeleton: not reached" in checks[-1].detail and "No JSON found" in checks[-1].detail
    write_run(tmp_path / "silent", status="finished", reason=None, stages=architecture, stopped=None)
    assert not smoke.run_statuses(tmp_path / "silent")[-1].ok
    write_run(tmp_path / "failed", status="failed", reason=None, stages={}, stopped=None)
    assert not smoke.run_statuses(tmp_path / "failed")[0].ok  # failed without saying why
    assert not smoke.run_statuses(tmp_path / "nothing")[0].ok  # no run.json


def test_reflect_statuses_need_a_reason_for_an_error_unit(smoke, tmp_path: Path) -> None:
    rows = [{"task_id": "word_index", "status": "failed", "error": None, "result": {"passed_at": None}},
            {"task_id": "ledger_book", "status": "error", "error": "ModelCallError: ...", "result": None}]
    (tmp_path / "ledger.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert smoke.reflect_statuses(tmp_path)[0].ok
    rows[1]["error"] = None
    (tmp_path / "ledger.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert not smoke.reflect_statuses(tmp_path)[0].ok


def test_refine_statuses_need_every_turn_tested_or_a_reason(smoke, tmp_path: Path) -> None:
    turns = [{"turn": 1, "passed": True, "status": "passed"}, {"turn": 2, "passed": False, "status": "failed"}]
    entries = [{"check": {"task_id": "slugify", "error": None}},
               {"row": {"key": "smollm2/fh-basic/slugify", "status": "ok", "turns": turns, "error": None}},
               {"row": {"key": "smollm2/ce-basic/slugify", "status": "error", "turns": [],
                        "error": "ModelCallError: the server refused"}}]

    def statuses(rows: list[dict]) -> list:
        (tmp_path / "ledger.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in rows))
        return smoke.refine_statuses(tmp_path)

    validated, played = statuses(entries)
    assert validated.ok and played.ok and "2 turn(s) PF (passed, failed)" in played.detail
    entries[2]["row"]["error"] = None  # an error row that does not say why
    assert not statuses(entries)[1].ok
    entries[2]["row"]["error"] = "why"
    entries[1]["row"]["turns"] = [{"turn": 1, "passed": False, "status": ""}]  # a turn never tested
    assert not statuses(entries)[1].ok
    entries[0]["check"]["error"] = "the reference fails its own tests"
    assert not statuses(entries)[0].ok
    assert not statuses(entries[:1])[0].ok  # no task run at all


def test_prose_in_a_python_file_and_a_traceback_fail_their_checks(smoke, tmp_path: Path) -> None:
    out = tmp_path / "run"
    (out / "repository" / "pkg").mkdir(parents=True)
    (out / "repository" / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    assert smoke.python_files_compile(out).ok
    (out / "repository" / "pkg" / "b.py").write_text("Sure! Here is the implementation you asked for.\n")
    check = smoke.python_files_compile(out)
    assert not check.ok and "b.py" in check.detail
    log = tmp_path / "run.log"
    log.write_text("architecture 1/2: designing\nprojectgen: error: the run failed (model: ...)\n")
    assert smoke.clean_exit("run", 2, log).ok  # a model that failed for good: one line
    assert not smoke.clean_exit("run", 70, log).ok
    log.write_text("Traceback (most recent call last):\n  File ...\nKeyError: 'x'\n")
    assert not smoke.clean_exit("run", 1, log).ok


def test_a_file_added_or_changed_in_the_checkout_is_caught(smoke, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "kept.txt").write_text("a")
    before = smoke.snapshot(tmp_path, [tmp_path / "out"])
    (tmp_path / "out" / "inside.txt").write_text("fine")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"")
    assert smoke.untouched(before, smoke.snapshot(tmp_path, [tmp_path / "out"]), "here").ok
    (tmp_path / "stray.py").write_text("x = 1\n")
    check = smoke.untouched(before, smoke.snapshot(tmp_path, [tmp_path / "out"]), "here")
    assert not check.ok and "stray.py" in check.detail


SERVER_LOG = """\
INFO:     127.0.0.1:56686 - "GET /v1/models HTTP/1.1" 200 OK
INFO:     127.0.0.1:57304 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
llama_perf_context_print:        load time =       7.73 ms
llama_perf_context_print: prompt eval time =   28984.30 ms /   949 tokens (   30.54 ms per token,    32.74 tokens per second)
llama_perf_context_print:        eval time =  103874.77 ms /   245 runs   (  423.98 ms per token,     2.36 tokens per second)
llama_perf_context_print:       total time =  162685.63 ms /  1194 tokens
INFO:     127.0.0.1:35338 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 11 prefix-match hit, remaining 2641 prompt tokens to eval
llama_perf_context_print: prompt eval time =   56132.65 ms /  2641 tokens (   21.25 ms per token,    47.05 tokens per second)
llama_perf_context_print:        eval time =     267.59 ms /    11 runs   (   24.33 ms per token,    41.11 tokens per second)
INFO:     127.0.0.1:35338 - "POST /v1/chat/completions HTTP/1.1" 200 OK
"""


def test_server_figures_count_requests_and_read_llama_cpp_timings(smoke, tmp_path: Path) -> None:
    """The lines as llama-cpp-python 0.3.36's server writes them (uvicorn's access log, llama.cpp's perf lines)."""
    log = tmp_path / "server.log"
    log.write_text(SERVER_LOG)
    figures = smoke.server_figures(log)
    assert figures["requests"] == 3 and figures["requests_by_status"] == {"400": 1, "200": 2}
    assert (figures["prompt_tokens_evaluated"], figures["tokens_generated"]) == (949 + 2641, 245 + 11)
    assert figures["prompt_tokens_per_s"] == round(3590 / (28984.30 + 56132.65) * 1000, 1)
    assert figures["generated_tokens_per_s"] == round(256 / (103874.77 + 267.59) * 1000, 1)


def test_the_report_prints_every_step_and_the_server_figures(smoke, tmp_path: Path, capsys) -> None:
    log = tmp_path / "server.log"
    log.write_text(SERVER_LOG)
    records = [record(), record(tokens_estimated=True, finish_reason="length")]
    figures = {"model": "SmolLM2", "tmp_leftovers": [],
               "steps": {"run": {"exit": 1, **smoke.usage_figures(records, 10.0)}},
               "total": {**smoke.usage_figures(records, 12.0), "server": smoke.server_figures(log)}}
    assert figures["total"]["estimated_calls"] == 1 and figures["total"]["output_tokens"] == 200
    smoke.report([smoke.Check("a check", False, "why")], figures)
    out = capsys.readouterr().out
    assert "[FAIL] a check - why" in out and "  run               1     2" in out and "3 requests" in out


def test_a_step_with_replayed_roles_sets_their_calls_apart_and_checks_the_served_ones(smoke) -> None:
    replay = record(model="scripted:reference replay (oracle, not a model)", tokens_estimated=True)
    checks = smoke.usage_checks("run-given-tree", [replay, record()], cap=1024, replayed=True)
    assert all(check.ok for check in checks) and "1 replayed call(s)" in checks[0].detail
    failed = [c.name for c in smoke.usage_checks("run-given-tree", [record()], cap=None, replayed=True) if not c.ok]
    assert failed == ["run-given-tree: the replayed roles' calls recorded as the replay's"]
    assert not smoke.usage_checks("run", [replay], cap=None)[0].ok  # where no role is replayed: estimated
    assert smoke.served([replay, record()]) == [record()]
