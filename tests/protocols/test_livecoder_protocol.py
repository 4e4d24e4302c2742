"""LiveCoder as a protocol is an adapter over the experiment's batch: `evaluate("livecoder", ...)` asks for exactly
the experiment `projectgen experiment` runs with the same options, and refuses what it refuses in one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.examples import example_tasks_dir
from projectgen.errors import ProjectGenError
from projectgen.experiments.models import parse_models
from projectgen.experiments.spec import ExperimentSpec
from projectgen.protocols.definition import BatchOptions, Evaluation
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.livecoder.batch import experiment_spec
from projectgen.protocols.livecoder.settings import LiveCoderSettings


def test_an_evaluation_is_the_experiment_its_options_name(tmp_path: Path) -> None:
    settings = LiveCoderSettings(methods="livecoder,direct", settings=Settings(threshold=7.0),
                                 attempt_settings=AttemptSettings(attempts=2), max_tokens=5000,
                                 denominator="reference", faults="latency=1s")
    evaluation = Evaluation(dataset=example_tasks_dir(), models=parse_models(["reference"]), settings=settings,
                            out=tmp_path, options=BatchOptions(tasks=["kvstore"], base_url="http://127.0.0.1:9/v1",
                                                               sampling={"temperature": 0.5}))
    spec = experiment_spec(evaluation)
    expected = ExperimentSpec(dataset=example_tasks_dir(), models=("reference",), methods=("livecoder", "direct"),
                              settings=Settings(threshold=7.0), attempt_settings=AttemptSettings(attempts=2),
                              tasks=("kvstore",), max_tokens=5000, base_url="http://127.0.0.1:9/v1",
                              sampling={"temperature": 0.5}, denominator="reference", faults="latency=1s")
    assert spec == expected


def test_a_method_the_experiment_does_not_know_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ProjectGenError, match="unknown method"):
        evaluate("livecoder", example_tasks_dir(), ["reference"], {"methods": "livecoder,nope"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()
