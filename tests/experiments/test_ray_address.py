"""A Ray address nothing answers at is one line before anything starts, not Ray's minutes of retries."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.errors import ProjectGenError
from projectgen.experiments.ray_executor import check_reachable


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unknown_host_and_a_closed_port_are_one_line_each() -> None:
    with pytest.raises(ProjectGenError, match=r"cannot join Ray at notahost.invalid:1: host 'notahost.invalid' "
                                              r"not found"):
        check_reachable("notahost.invalid:1")
    port = closed_port()
    with pytest.raises(ProjectGenError, match="nothing answers there"):
        check_reachable(f"ray://127.0.0.1:{port}")
    check_reachable("auto")  # Ray finds the cluster itself


def test_experiment_with_an_unreachable_cluster_exits_2_before_making_its_folder(tmp_path: Path, capsys) -> None:
    pytest.importorskip("ray")
    code = main(["experiment", "--dataset", "examples", "--model", "reference", "--executor", "ray",
                 "--ray-address", "notahost.invalid:1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot join Ray at notahost.invalid:1" in err
    assert not (tmp_path / "out").exists()
