"""LiveCoder as a protocol is an adapter over the experiment's batch: `evaluate("livecoder", ...)` asks for exactly
the experiment `projectgen experiment` (its preset) runs with the same options, and refuses what it refuses in one
line."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.config import AttemptSettings, Settings
from projectgen.experiments.engine import Shard
from projectgen.datasets.examples import example_tasks_dir
from projectgen.errors import ProjectGenError
from projectgen.experiments.models import parse_models
from projectgen.experiments.spec import ExperimentSpec
from projectgen.protocols.definition import BatchOptions, Evaluation
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.livecoder.batch import experiment_spec
from projectgen.protocols.livecoder.settings import LiveCoderSettings

SCORER = str(Path(__file__).parents[2] / "examples" / "custom_method.py") + ":docstring_coverage"


def test_an_evaluation_is_the_experiment_its_options_name(tmp_path: Path) -> None:
    settings = LiveCoderSettings(methods="livecoder,direct", settings=Settings(threshold=7.0),
                                 attempt_settings=AttemptSettings(attempts=2), max_tokens=5000,
                                 denominator="reference", faults="latency=1s", scorers=(SCORER,))
    evaluation = Evaluation(dataset=example_tasks_dir(), models=parse_models(["reference"]), settings=settings,
                            out=tmp_path, options=BatchOptions(tasks=["kvstore"], base_url="http://127.0.0.1:9/v1",
                                                               sampling={"temperature": 0.5}))
    spec = experiment_spec(evaluation)
    expected = ExperimentSpec(dataset=example_tasks_dir(), models=("reference",), methods=("livecoder", "direct"),
                              settings=Settings(threshold=7.0), attempt_settings=AttemptSettings(attempts=2),
                              tasks=("kvstore",), max_tokens=5000, base_url="http://127.0.0.1:9/v1",
                              sampling={"temperature": 0.5}, denominator="reference", faults="latency=1s")
    assert [scorer.identity.spec for scorer in spec.scorers] == [SCORER]  # each load makes a new scorer object
    assert replace(spec, scorers=()) == expected


def test_a_method_the_experiment_does_not_know_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ProjectGenError, match="unknown method"):
        evaluate("livecoder", example_tasks_dir(), ["reference"], {"methods": "livecoder,nope"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def results_without_timings(out: Path) -> dict:
    """An experiment's results.json without what differs between two folders of one experiment."""
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for model in data["models"]:
        for pair in model["pairs"]:
            pair.pop("run_dir"), pair.pop("duration_s")
    data.pop("out_dir")
    return data


def test_projectgen_experiment_and_evaluate_livecoder_are_one_way_with_every_option(tmp_path: Path, capsys) -> None:
    """`projectgen experiment`'s --shard and --prices are settings of the protocol: the command (its preset) and
    `evaluate("livecoder", ...)` run the same share of the plan, price it from the same file, and write the same
    results."""
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-4o"]\ninput = 2.5\noutput = 10.0\n', encoding="utf-8")
    command, api = tmp_path / "command", tmp_path / "api"
    assert main(["experiment", "--dataset", "examples", "--model", "reference", "--method", "direct", "--attempts",
                 "1", "--shard", "2/2", "--prices", str(prices), "--out", str(command)]) == 0, capsys.readouterr().err
    evaluate("livecoder", example_tasks_dir(), ["reference"],
             {"methods": "direct", "attempt_settings": {"attempts": 1}, "shard": "2/2", "prices": str(prices)}, api)
    for out in (command, api):
        ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [line["key"] for line in ledger] == ["direct/reference/wordfreq"]  # kvstore is share 1/2
        assert json.loads((out / "experiment.json").read_text(encoding="utf-8"))["shard"] == "2/2"
        assert str(prices) in json.loads((out / "results.json").read_text(encoding="utf-8"))["prices"]
    assert results_without_timings(command) == results_without_timings(api)
    assert LiveCoderSettings(shard="1/4").shard == Shard(1, 4)


@pytest.mark.parametrize(("setting", "line"), [({"shard": "3/2"}, "--shard takes i/N"),
                                               ({"shard": Shard(5, 2)}, "--shard takes i/N"),  # would run nothing
                                               ({"shard": {"index": 0, "count": 2}}, "--shard takes i/N"),
                                               ({"prices": "no-such-prices.toml"}, "price file not found")])
def test_a_bad_share_or_price_file_is_one_line_before_anything_is_written(tmp_path: Path, setting: dict,
                                                                           line: str) -> None:
    with pytest.raises(ProjectGenError, match=line):
        evaluate("livecoder", example_tasks_dir(), ["reference"], setting, tmp_path / "out")
    assert not (tmp_path / "out").exists()
