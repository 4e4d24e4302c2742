"""A system's own environment: built once per what it is made of, its prepare steps run in it, a failed step one
line naming the step and the log, an unfinished build redone (offline: no requirements to install)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from projectgen.external.environment import MANIFEST, SystemEnvironmentError, SystemEnvironments, environment_key
from projectgen.external.systems import SYSTEMS_FILE, load_systems

WRITE = "import pathlib, sys; pathlib.Path(sys.argv[1], 'prepared.txt').write_text(sys.argv[2])"


def fake(**changes: object):
    return dataclasses.replace(load_systems(SYSTEMS_FILE)["fake"], **changes)


def test_an_environment_is_built_once_with_its_prepare_steps_and_rebuilt_when_unfinished(tmp_path: Path) -> None:
    environments = SystemEnvironments(tmp_path)
    entry = fake(prepare=(("-c", WRITE, "{env}", "one"),))
    built = environments.ensure(entry)
    assert (built.path / "prepared.txt").read_text() == "one" and built.python.exists()
    assert built.prepared == [["-c", WRITE, "{env}", "one"]] and built.python_version
    (built.path / "prepared.txt").write_text("touched")
    assert environments.ensure(entry) == built and (built.path / "prepared.txt").read_text() == "touched"
    other = fake(prepare=(("-c", WRITE, "{env}", "two"),))
    assert environment_key(other, None) != built.key  # another step: another environment
    (built.path / MANIFEST).unlink()  # a build killed before its manifest
    again = environments.ensure(entry)
    assert (again.path / "prepared.txt").read_text() == "one"


def test_a_failing_prepare_step_is_one_line_naming_it_and_leaves_no_environment(tmp_path: Path) -> None:
    environments = SystemEnvironments(tmp_path)
    entry = fake(prepare=(("-c", "raise SystemExit('no tiktoken files here')"),))
    with pytest.raises(SystemEnvironmentError, match="the prepare step of the environment failed: no tiktoken "
                                                     "files here \\(log: .*build.log\\)"):
        environments.ensure(entry)
    assert environments.lookup(entry) is None
