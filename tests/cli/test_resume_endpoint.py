"""A run whose server is unreachable says nothing was generated, and resumes against a server that moved."""
from __future__ import annotations

import json
import socket
from pathlib import Path

from projectgen.cli import main
from projectgen.config import Settings


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_server_leaves_no_best_so_far_and_resume_may_move_the_endpoint(
        tmp_path: Path, env_cache: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr("projectgen.cli.run.settings_from_args", lambda args: Settings(retries=0))
    out = tmp_path / "run"
    first = f"http://127.0.0.1:{closed_port()}/v1"
    assert main(["run", "kvstore", "--model", "served", "--base-url", first, "--attempts", "1", "--out", str(out),
                 "--cache-dir", str(env_cache)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "failed before its model produced anything" in err and "nothing was generated" in err
    assert "best so far" not in err and not (out / "repository").exists()

    moved = f"http://127.0.0.1:{closed_port()}/v1"
    assert main(["run", "--resume", str(out), "--base-url", moved, "--cache-dir", str(env_cache)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "leave out" not in err and "nothing was generated" in err  # resumed, against the new endpoint
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["models"] == {"default": "served", "base_url": moved}

    assert main(["run", "--resume", str(out), "--attempts", "3"]) == 2  # what the run means stays fixed
    assert "leave out --attempts" in capsys.readouterr().err
