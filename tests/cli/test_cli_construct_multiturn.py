"""`projectgen construct multiturn` at the command line: user mistakes are one line and exit 2, and
`scripted:examples` names the bundled replay through the one resolution of bundled scripts (the command run end to
end is tests/construction/test_construct_multiturn.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.construct_multiturn import model_spec
from projectgen.datasets.examples import example_script_path


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "examples", "--model", "reference"], "no reference to replay"),
    (["--seeds", "nowhere", "--model", "scripted:examples"], "nowhere: dataset folder not found"),
    (["--seeds", "examples", "--model", "scripted:no-such-script"], "unknown example script 'no-such-script'"),
    (["--seeds", "examples", "--model", "scripted:examples", "--only", "nope"], "unknown seed(s) nope"),
    (["--seeds", "examples", "--model", "scripted:examples", "--contamination-model", "scripted:examples",
      "--contamination-model", "scripted:examples"], "contamination model is named twice"),
])
def test_user_mistakes_are_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    code = main(["construct", "multiturn", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("projectgen: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_construct_without_a_sub_command_says_so(capsys) -> None:
    assert main(["construct"]) == 2
    assert "construct needs a sub-command" in capsys.readouterr().err


def test_scripted_examples_is_the_bundled_replay_and_a_path_is_made_absolute(tmp_path: Path, monkeypatch) -> None:
    assert model_spec("scripted:examples") == f"scripted:{example_script_path('construct-multiturn')}"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.json").write_text("{}")
    assert model_spec("scripted:mine.json") == f"scripted:{tmp_path / 'mine.json'}"
    assert model_spec("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
