"""The experiment folder's layout: every method's pairs at OUT/METHOD/MODEL/TASK, and a folder begun before that
layout (LiveCoder's pairs at OUT/MODEL/TASK, experiment.json naming no layout) still continues and reports in place.

Offline: the reference replay (`--model reference`) on the bundled kvstore and wordfreq tasks, one attempt."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from projectgen.errors import ProjectGenError
from projectgen.experiments.folder_layout import LEGACY_LAYOUT, PAIR_LAYOUT, folder_layout, pair_key
from projectgen.experiments.merge import merge_experiments

from test_support import experiment_cli as cli


def experiment(out: Path, tasks: str, method: str = "livecoder") -> tuple[int, str]:
    return cli("--dataset", "examples", "--model", "reference", "--tasks", tasks, "--method", method,
               "--attempts", "1", "--embedding", "hashing", "--out", str(out))


def pairs(out: Path) -> dict[str, str]:
    """key -> how, from results.json."""
    results = json.loads((out / "results.json").read_text())
    return {pair["key"]: pair["how"] for model in results["models"] for pair in model["pairs"]}


def to_legacy(out: Path) -> None:
    """The folder as an experiment begun before the layout left it: LiveCoder's pairs at OUT/MODEL/TASK, the ledger
    keyed so, experiment.json without a layout."""
    for run_dir in sorted((out / "livecoder").glob("*/*")):
        target = out / run_dir.parent.name / run_dir.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(run_dir, target)
    shutil.rmtree(out / "livecoder")
    config = json.loads((out / "experiment.json").read_text())
    del config["layout"]
    (out / "experiment.json").write_text(json.dumps(config, indent=1) + "\n")
    lines = (out / "ledger.jsonl").read_text().replace('"livecoder/reference/', '"reference/')
    (out / "ledger.jsonl").write_text(lines.replace("/livecoder/reference/", "/reference/"))


def test_every_method_puts_its_pairs_at_out_method_model_task(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, output = experiment(out, "kvstore", "livecoder,direct")
    assert code == 0, output
    for method in ("livecoder", "direct"):
        assert (out / method / "reference" / "kvstore" / "summary.json").is_file()
    assert not (out / "reference").exists()
    assert json.loads((out / "experiment.json").read_text())["layout"] == PAIR_LAYOUT
    assert pairs(out) == {"livecoder/reference/kvstore": "run", "direct/reference/kvstore": "run"}
    assert {json.loads(line)["key"] for line in (out / "ledger.jsonl").read_text().splitlines()} == set(pairs(out))


def test_a_folder_of_the_old_layout_continues_and_reports_in_place(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert experiment(out, "kvstore")[0] == 0
    to_legacy(out)
    finished = (out / "reference" / "kvstore" / "summary.json").read_text()

    code, output = experiment(out, "kvstore,wordfreq")  # the same command with one more task: continued
    assert code == 0, output
    assert pairs(out) == {"reference/kvstore": "ledger", "reference/wordfreq": "run"}
    assert (out / "reference" / "wordfreq" / "summary.json").is_file() and not (out / "livecoder").exists()
    assert (out / "reference" / "kvstore" / "summary.json").read_text() == finished  # not run again
    assert json.loads((out / "experiment.json").read_text())["layout"] == LEGACY_LAYOUT  # kept, now named

    (out / "ledger.jsonl").unlink()  # without its ledger, the finished runs are collected where they are
    assert experiment(out, "kvstore,wordfreq")[0] == 0
    assert pairs(out) == {"reference/kvstore": "collected", "reference/wordfreq": "collected"}
    summary = json.loads((out / "results.json").read_text())["summary"]
    assert [(row["model"], row["pass_sum"], row["tests"]) for row in summary] == [("reference", 29 + 11, 29 + 11)]


def test_a_layout_that_cannot_be_read_is_one_clear_line(tmp_path: Path) -> None:
    assert folder_layout({}) == LEGACY_LAYOUT and folder_layout({"layout": PAIR_LAYOUT}) == PAIR_LAYOUT
    assert pair_key("m", "t", "livecoder", LEGACY_LAYOUT) == "m/t" and pair_key("m", "t", "direct", LEGACY_LAYOUT) == \
        "direct/m/t" and pair_key("m", "t") == "livecoder/m/t"
    with pytest.raises(ProjectGenError, match="unknown folder layout 'tree'") as raised:
        folder_layout({"layout": "tree"})
    assert "\n" not in str(raised.value)


@pytest.mark.slow  # merging shards stays in the default suite (test_shards.py)
def test_folders_of_two_layouts_are_not_merged(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        assert experiment(folder, "kvstore")[0] == 0
    to_legacy(old)
    with pytest.raises(ProjectGenError, match="keep\\(s\\) LiveCoder's pairs at OUT/MODEL/TASK") as raised:
        merge_experiments([old, new], tmp_path / "merged")
    assert str(old) in str(raised.value) and "\n" not in str(raised.value)
