"""A new protocol touches only its own folder: a toy one, written into a temporary package outside projectgen,
runs through `evaluate` and `projectgen evaluate` over the engine and the driver, scores inside its units, and
resumes (a finished unit is not run again; a unit whose ledger line was lost is read back from its folder)."""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.errors import ProjectGenError
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.names import protocol_names
from projectgen.protocols.registry import load_protocol
from projectgen.protocols.samples import EvaluationResults

# The whole protocol: a folder of questions, a one-node graph that asks the model through the run's gateway,
# a scorer on the final state, typed settings. Nothing of projectgen is edited to add it.
TOY_PROTOCOL = '''
from dataclasses import dataclass
from pathlib import Path

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from projectgen.protocols.definition import Protocol, Solver


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str


class ToySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shout: bool = False


class ToyState(TypedDict, total=False):
    question: str
    reply: str


@dataclass
class ToyContext:
    gateway: object
    model: object
    question_id: str


def load_dataset(folder: Path) -> list[Question]:
    return [Question(p.stem, p.read_text().split("|")[0], p.read_text().split("|")[1].strip())
            for p in sorted(folder.glob("*.txt"))]


async def ask(state: ToyState, runtime: Runtime[ToyContext]) -> dict:
    ctx = runtime.context
    reply = await ctx.gateway.ask(ctx.model, [("user", state["question"])], role="toy", stage="toy",
                                  target=ctx.question_id)
    return {"reply": reply.strip()}


def solver(question: Question, settings: ToySettings, model, runner) -> Solver:
    graph = StateGraph(ToyState, context_schema=ToyContext)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    text = question.text.upper() if settings.shout else question.text
    return Solver(graph=graph.compile(), start={"question": text},
                  context=lambda gateway: ToyContext(gateway=gateway, model=model, question_id=question.id))


def exact(question: Question, state: dict) -> float:
    return 1.0 if state.get("reply") == question.answer else 0.0


PROTOCOL = Protocol(name="toy", summary="asks each question once", settings=ToySettings,
                    load_dataset=load_dataset, solver=solver, scorers={"exact": exact}, sandbox=False)
NAN_PROTOCOL = Protocol(name="toy-nan", summary="a scorer that gives no number", settings=ToySettings,
                        load_dataset=load_dataset, solver=solver, scorers={"broken": lambda q, s: float("nan")},
                        sandbox=False)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The toy protocol's package on sys.path, its dataset (two questions) and a script that answers one right."""
    package = tmp_path / "toy_protocols"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "toy.py").write_text(textwrap.dedent(TOY_PROTOCOL), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy_protocols", raising=False)
    monkeypatch.delitem(sys.modules, "toy_protocols.toy", raising=False)
    data = tmp_path / "questions"
    data.mkdir()
    (data / "add.txt").write_text("2+3?|5", encoding="utf-8")
    (data / "capital.txt").write_text("capital of France?|Paris", encoding="utf-8")
    script = tmp_path / "answers.json"
    script.write_text(json.dumps({"responses": [{"role": "toy", "target": "add", "content": "5"},
                                                {"role": "toy", "target": "capital", "content": "Lyon"}]}),
                      encoding="utf-8")
    return {"data": data, "script": script, "out": tmp_path / "out"}


def usage_lines(folder: Path) -> int:
    usage = folder / "usage.jsonl"
    return len(usage.read_text(encoding="utf-8").splitlines()) if usage.is_file() else 0


def test_a_toy_protocol_runs_through_evaluate_scores_in_its_units_and_resumes(toy: dict[str, Path]) -> None:
    model = f"toy-model=scripted:{toy['script']}"
    results = evaluate("toy_protocols.toy", toy["data"], [model], {"shout": False}, toy["out"])
    assert isinstance(results, EvaluationResults)
    assert {row.task_id: row.scores for row in results.rows} == {"add": {"exact": 1.0}, "capital": {"exact": 0.0}}
    assert results.summary[0].means == {"exact": 0.5} and results.summary[0].errors == 0
    unit = toy["out"] / "toy-model" / "add"
    log = json.loads((unit / "log.json").read_text(encoding="utf-8"))
    assert log["kind"] == "toy" and log["record"]["scores"] == {"exact": 1.0}  # scored inside the unit, by the driver
    assert log["samples"] == [{"id": "add", "scores": {"exact": {"value": 1.0, "passed": None, "total": None,
                                                                  "detail": {}}}}]
    run = json.loads((unit / "run.json").read_text(encoding="utf-8"))
    assert run["method"] == "toy" and run["protocol"] == {"shout": False}
    assert usage_lines(unit) == 1
    on_disk = json.loads((toy["out"] / "results.json").read_text(encoding="utf-8"))
    assert on_disk["protocol"] == "toy" and on_disk["summary"][0]["means"] == {"exact": 0.5}

    # continued: the ledger says both are done; with the ledger gone each unit is read back from its folder
    again = evaluate("toy_protocols.toy", toy["data"], [model], {"shout": False}, toy["out"])
    (toy["out"] / "ledger.jsonl").unlink()
    read_back = evaluate("toy_protocols.toy", toy["data"], [model], {"shout": False}, toy["out"])
    assert again.rows == results.rows and read_back.rows == results.rows
    assert usage_lines(unit) == 1  # no model call was made again


def test_a_toy_protocol_refuses_settings_its_model_does_not_have_and_a_changed_batch(toy: dict[str, Path]) -> None:
    model = f"scripted:{toy['script']}"
    with pytest.raises(ProjectGenError, match=r"protocol toy: bad settings \(loud: Extra inputs"):
        evaluate("toy_protocols.toy", toy["data"], [model], {"loud": True}, toy["out"])
    evaluate("toy_protocols.toy", toy["data"], [model], {}, toy["out"])
    with pytest.raises(ProjectGenError, match="other settings"):
        evaluate("toy_protocols.toy", toy["data"], [model], {"shout": True}, toy["out"])


def test_the_cli_runs_a_protocol_of_ones_own_by_module(toy: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "toy_protocols.toy", "--dataset", str(toy["data"]), "--model",
                 f"scripted:{toy['script']}", "--set", "shout=false", "--out", str(toy["out"])])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "2 sample(s), 0 error(s); exact 0.500" in printed
    assert json.loads((toy["out"] / "results.json").read_text(encoding="utf-8"))["settings"] == {"shout": False}


def test_bundled_protocols_are_found_by_their_folders_and_unknown_ones_are_one_line() -> None:
    assert "reflection" in protocol_names()
    assert load_protocol("reflection").name == "reflection"
    with pytest.raises(ProjectGenError, match="unknown protocol 'nope' \\(protocols: .*reflection"):
        load_protocol("nope")
    with pytest.raises(ProjectGenError, match="no module 'no_such_pkg.mod' can be imported"):
        load_protocol("no_such_pkg.mod")
    with pytest.raises(ProjectGenError, match="is not a projectgen Protocol"):
        load_protocol("projectgen.errors:ProjectGenError")


def test_every_bundled_protocol_is_named_after_its_folder_with_typed_settings() -> None:
    from pydantic import BaseModel

    for name in protocol_names():
        protocol = load_protocol(name)
        assert protocol.name == name and issubclass(protocol.settings, BaseModel), name
        protocol.settings()  # its defaults are valid settings


def test_a_score_that_is_not_a_number_is_an_error_row_never_a_figure(toy: dict[str, Path],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "toy_protocols.toy:NAN_PROTOCOL", "--dataset", str(toy["data"]), "--model",
                 f"scripted:{toy['script']}", "--out", str(toy["out"])])
    printed = capsys.readouterr().out
    assert code == 1, printed
    results = json.loads((toy["out"] / "results.json").read_text(encoding="utf-8"))
    assert results["summary"][0]["means"] == {"broken": None} and results["summary"][0]["errors"] == 2
    assert all("scorer 'broken' gave nan" in row["error"] for row in results["rows"])

