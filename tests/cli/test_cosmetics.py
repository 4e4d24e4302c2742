"""What a user sees around the numbers: piped tables whole, retries and library chatter as projectgen's own
one-line messages (no raw ``WARNING:name:`` lines). The empty progress bar before a usage error and the
'did you mean' for misspelt model specs are in test_bad_input.py."""
from __future__ import annotations

import logging
import socket
from pathlib import Path
from types import SimpleNamespace

from projectgen.cli import main
from projectgen.cli.logs import command_logging
from projectgen.cli.tables import bench_table, make_console
from projectgen.config import Settings


def test_a_piped_table_is_whole_not_cut_at_80_columns(capsys) -> None:
    note = "collection error in tests/test_cli.py: " + "ModuleNotFoundError: no module named 'licenses' " * 3
    row = SimpleNamespace(task_id="particle-swarm-optimization", status="error", passed=0, total=12, pass_rate=0.0,
                          duration=3.25, note=note.strip())
    make_console().print(bench_table([row], "reference implementations"))
    lines = capsys.readouterr().out.splitlines()
    assert any("particle-swarm-optimization" in line and note.strip() in line for line in lines), "\n".join(lines)
    assert max(map(len, lines)) > 80


def test_a_columns_left_in_the_environment_does_not_cut_piped_tables(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # what a shell or a parent process may export
    assert make_console().width > 80


def test_during_a_command_log_records_are_one_projectgen_line_and_libraries_below_error_are_quiet(capsys) -> None:
    root = logging.getLogger()
    before = root.handlers[:]
    with command_logging():
        logging.getLogger("projectgen.llm.door").warning("model call code/coder failed with %s; retry %d of %d",
                                                         "APIConnectionError", 1, 3)
        logging.warning("a library's module-level warning")  # would call basicConfig with no root handler
        logging.getLogger("httpx").warning("HTTP Request: POST http://x/v1 \"HTTP/1.1 503\"")
        logging.getLogger("some.library").error("connection pool broken\nTraceback (most recent call last):")
    assert root.handlers == before
    err = capsys.readouterr().err
    assert err.splitlines() == ["projectgen: model call code/coder failed with APIConnectionError; retry 1 of 3",
                                "projectgen: some.library: connection pool broken"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_doors_retries_read_as_projectgen_lines(tmp_path: Path, env_cache: Path, monkeypatch, capsys) -> None:
    raw = logging.StreamHandler()  # what a library's logging.basicConfig() leaves: WARNING:name: lines
    raw.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
    monkeypatch.setattr(logging.getLogger(), "handlers", [raw])
    monkeypatch.setattr("projectgen.cli.run.settings_from_args", lambda args: Settings(retries=1, retry_backoff=0))
    url = f"http://127.0.0.1:{closed_port()}/v1"
    assert main(["run", "kvstore", "--model", "served", "--base-url", url, "--attempts", "1",
                 "--out", str(tmp_path / "run"), "--cache-dir", str(env_cache)]) == 2
    err = capsys.readouterr().err
    assert "WARNING:" not in err, err
    retries = [line for line in err.splitlines() if "retry 1 of 1" in line]
    assert retries and all(line.startswith("projectgen: model call ") for line in retries), err
