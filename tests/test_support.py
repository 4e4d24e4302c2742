"""Helpers shared by several test modules (imported by name; pytest puts tests/ on the path)."""
from __future__ import annotations

import json
import textwrap
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite

__test__ = False  # not a test module, despite its name


def strict_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, failing on the first that is not JSON (nothing may be torn); [] when absent."""
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"{path}:{number} is not JSON: {line[:120]!r}") from None
    return rows


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def chroma_server(data_dir: Path, timeout: float = 60.0) -> Iterator[str]:
    """A local Chroma server (`chroma run`, shipped with the chromadb package) on a free port; skips without it."""
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip("the chroma command is not installed")
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "server.log"
    with open(log, "w") as sink:
        server = subprocess.Popen([str(chroma), "run", "--path", str(data_dir / "data"), "--host", "127.0.0.1",
                                   "--port", str(port)], stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"the chroma server did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def make_task(root: Path, tests: dict[str, str], env_vars: dict[str, str] | None = None) -> Task:
    """A task folder holding `unit_tests/` with the given test files."""
    for name, body in tests.items():
        path = root / "unit_tests" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
    return Task(
        id=root.name, root=root, format="taskdir", docs=Documents(prd="demo"),
        suites={"unit": TestSuite(kind="unit", path="unit_tests")},
        env=EnvSpec(env_vars=env_vars or {}),
    )
