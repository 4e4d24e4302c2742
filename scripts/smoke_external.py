"""`make smoke-external`: every PyPI external system against a real OpenAI-compatible server, checked for structure.

For each system of source "pypi" in projectgen/external/systems.toml (or those named with --systems), and
each checkout system given its checkout with ``--system-path NAME=DIR`` (ChatDev 1.0, CodeS), runs
``projectgen experiment --method SYSTEM`` on one bundled task (wordfreq) against the tiny real model that
`make smoke-local-model` serves (llama-cpp-python's server with SmolLM2-135M-Instruct, started and stopped
here by its pid, `scripts/smoke_local_model.py`), or against a server already running (--url, with its
log as --server-log to count its requests). The system's environment is built on first use (its pins
from PyPI: the network is needed for that build only). Checked for each system, never the quality of the
answers (a 135M model's answers are wrong):

- it ran: the command ended with a status of its own and no traceback, its pair is a row (not an error),
  run.json says how the system ended and names the system, its source, version and adapter hash;
- every call went through the bridge: the chat requests in the server's log while the system ran equal the
  requests its run recorded (usage.jsonl, retries included), and there was at least one;
- its output was scored and labelled: its row has a #Tests (or it wrote no file, which its summary.json says:
  no unit test runs on nothing, and wordfreq declares no #Tests to count it out of), and the results table
  names it.

It prints the figures and writes OUT/smoke.json; it exits 1 when a check fails.

    .venv/bin/python scripts/smoke_external.py [--venv DIR] [--out DIR] [--systems a,b] [--url URL --server-log F]
        [--system-path NAME=DIR ...]
"""
from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import smoke_local_model as local  # noqa: E402 - the server's start, stop and log figures, shared

ROOT = local.ROOT
SYSTEMS_FILE = ROOT / "projectgen" / "external" / "systems.toml"
TASK = "wordfreq"
MODEL = local.SERVED_NAME
Check = local.Check


@dataclass
class SystemResult:
    name: str
    returncode: int
    wall_s: float
    folder: Path
    log: Path
    server_requests: int | None
    checks: list[Check] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


def pypi_systems(path: Path = SYSTEMS_FILE) -> list[str]:
    """The systems of source "pypi" in the systems file, in its order."""
    return [name for name, entry in tomllib.loads(path.read_text(encoding="utf-8")).items()
            if entry.get("source") == "pypi"]


def experiment_arguments(system: str, url: str, folder: Path, cache_dir: str | None, max_output: int,
                         system_path: str | None = None) -> list[str]:
    return ["experiment", "--dataset", "examples", "--tasks", TASK, "--model", MODEL, "--base-url", url,
            "--method", system, "--out", str(folder), "--max-output-tokens", str(max_output),
            *(["--system-path", f"{system}={system_path}"] if system_path else []),
            *(["--cache-dir", cache_dir] if cache_dir else [])]


def checkout_paths(values: list[str]) -> dict[str, str]:
    """``--system-path NAME=DIR`` values by system name (a checkout system runs only when given its checkout)."""
    paths = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--system-path {value}: NAME=DIR")
        paths[name] = path
    return paths


def chat_requests(server_log: Path | None) -> int | None:
    """The chat requests the server's log shows so far (None without a log)."""
    if server_log is None:
        return None
    return local.server_figures(server_log)["requests"]


def system_checks(name: str, folder: Path, server_requests: int | None) -> list[Check]:
    """The checks of one system's experiment folder (see the module docstring); `server_requests`: the chat
    requests the server saw while it ran (None: not known, the check says so and fails)."""
    rows = [row for row in local.ledger_rows(folder) if row.get("method") == name]
    row = rows[-1] if rows else {}
    run_dir = folder / name / MODEL / TASK
    manifest = local.read_json(run_dir / "run.json") or {}
    system = manifest.get("protocol") or {}
    records = local.usage_records(run_dir)
    wrote = (local.read_json(run_dir / "summary.json") or {}).get("files")
    sent = sum(int(record.get("attempts") or 1) for record in records)
    results = local.read_json(folder / "results.json") or {}
    labelled = any(report.get("method") == name and report.get("model") == MODEL
                   for report in results.get("models", []))
    markdown = (folder / "results.md").read_text(encoding="utf-8") if (folder / "results.md").exists() else ""
    return [
        Check(f"{name}: its pair is a row, not an error", row.get("status") in ("finished", "budget-limited"),
              f"{row.get('status')}: {row.get('error') or row.get('run_note') or ''}"[:300]),
        Check(f"{name}: run.json says how the system ended", manifest.get("status") in (
            "finished", "failed", "budget-limited"), f"{manifest.get('status')}: {manifest.get('reason') or ''}"[:300]),
        Check(f"{name}: run.json names the system, its source, version and adapter", system.get("system") == name
              and bool(system.get("source")) and bool(system.get("adapter_sha256"))
              and (bool(system.get("version")) or not (system.get("distribution") or system.get("source") == "checkout")),
              f"{system.get('source')} {system.get('distribution')}=={system.get('version')}"),
        Check(f"{name}: it called the model through the bridge", bool(records), f"{len(records)} call(s) recorded"),
        Check(f"{name}: every call went through the bridge (server requests = recorded requests)",
              server_requests is not None and server_requests == sent,
              f"server {server_requests if server_requests is not None else 'unknown (no --server-log)'}, "
              f"recorded {sent}"),
        Check(f"{name}: its output was scored", row.get("final_unit_total") is not None or wrote == 0,
              f"unit {row.get('final_unit_passed')}/{row.get('final_unit_total')}" + (
                  " (it wrote no file: no unit test runs on nothing, and the task declares no #Tests)"
                  if wrote == 0 else f", {wrote} file(s) written")),
        Check(f"{name}: its results are labelled", labelled and f"{name} / {MODEL}" in markdown, ""),
    ]


def run_system(name: str, python: Path, args: argparse.Namespace, url: str, server_log: Path | None,
               env: dict[str, str], out: Path) -> SystemResult:
    folder, log = out / name, out / f"{name}.log"
    argv = [str(python), "-m", "projectgen", *experiment_arguments(name, url, folder, args.cache_dir,
                                                                  args.max_output_tokens,
                                                                  checkout_paths(args.system_path).get(name))]
    print(f"[smoke] {name}: {' '.join(argv[1:])}", flush=True)
    before = chat_requests(server_log)
    start = time.monotonic()
    with open(log, "w") as sink:
        done = subprocess.run(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT, stdin=subprocess.DEVNULL)
    after = chat_requests(server_log)
    requests = after - before if before is not None and after is not None else None
    result = SystemResult(name, done.returncode, time.monotonic() - start, folder, log, requests)
    result.checks = [local.clean_exit(name, done.returncode, log), *system_checks(name, folder, requests)]
    result.figures = local.usage_figures(local.usage_records(folder), result.wall_s)
    return result


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=str(ROOT / ".venv"), help="venv with projectgen (and, without --url, "
                        "the local-model extra)")
    parser.add_argument("--out", default=str(ROOT / "runs" / "smoke-external"), help="output folder, replaced")
    parser.add_argument("--systems", default="", help="systems to run (default: every pypi system)")
    parser.add_argument("--url", default=None, help="a running OpenAI-compatible server (…/v1) serving "
                        f"{MODEL!r}, instead of starting llama-cpp-python's")
    parser.add_argument("--server-log", default=None, help="with --url: its log, in which each chat request is a "
                        "line like uvicorn's (\"POST /v1/chat/completions HTTP/1.1\" 200)")
    parser.add_argument("--system-path", action="append", default=[], metavar="NAME=DIR",
                        help="a checkout system's checkout: that system runs too (repeatable)")
    parser.add_argument("--max-output-tokens", type=int, default=512)
    parser.add_argument("--n-ctx", type=int, default=16384)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache-dir", default=None, help="projectgen's environment cache (default: its own)")
    parser.add_argument("--ready-timeout", type=float, default=180.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = [name.strip() for name in args.systems.split(",") if name.strip()] or pypi_systems()
    names += [name for name in checkout_paths(args.system_path) if name not in names]
    python = local.venv_python(Path(args.venv))
    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = local.command_env(out)
    server = None
    if args.url:
        url, server_log = args.url.rstrip("/"), Path(args.server_log) if args.server_log else None
    else:
        port = local.free_port()
        url, server_log = f"http://127.0.0.1:{port}/v1", out / "server.log"
        server = local.start_server(python, local.find_gguf(python), port, args.n_ctx, args.threads, server_log)
    signal.signal(signal.SIGTERM, local.interrupted)  # so that `finally` stops the server
    results: list[SystemResult] = []
    try:
        if server is not None:
            ready = local.wait_ready(server, url, server_log, args.ready_timeout)
            print(f"[smoke] server ready in {ready:.1f} s (pid {server.pid})", flush=True)
        for name in names:
            results.append(run_system(name, python, args, url, server_log, env, out))
    finally:
        if server is not None:
            print(f"[smoke] server {local.stop_server(server)}", flush=True)
    failed = [check for result in results for check in result.checks if not check.ok]
    for result in results:
        print(f"[smoke] {result.name}: {result.wall_s:.0f} s, {json.dumps(result.figures)}", flush=True)
        for check in result.checks:
            print(f"  {'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}", flush=True)
    (out / "smoke.json").write_text(json.dumps([{**asdict(result), "folder": str(result.folder),
                                                 "log": str(result.log)} for result in results], indent=1))
    print(f"[smoke] {'FAILED: ' + str(len(failed)) + ' check(s)' if failed else 'passed'}; {out / 'smoke.json'}")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
