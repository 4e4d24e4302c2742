"""Published task sizes: the packaged table equals the paper's, and weights say where they came from."""
from __future__ import annotations

from pathlib import Path


from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_dataset, load_task
from projectgen.datasets.published import REFERENCE_LOC, published_sizes, task_weight

from test_support import paper_table


def test_the_packaged_sizes_are_the_papers() -> None:
    table2 = {r["repository"]: r for r in paper_table("projectgen_table2_dataset_stats.csv")
              if r["repository"] not in ("AVG", "MEDIAN")}
    cpe = published_sizes()["codeprojecteval"]
    assert {task: (size.loc, size.tests) for task, size in cpe.items()} == {
        task: (int(r["loc"]), int(r["unit_tests"])) for task, r in table2.items()}
    table3 = {r["task"]: r for r in paper_table("projectgen_table3_devbench_pass.csv")
              if r["task"] not in ("SUM", "AVG_weighted")}
    devbench = published_sizes()["devbench"]
    assert {size.paper_name: (size.loc, size.tests) for size in devbench.values()} == {
        task: (int(r["loc"]), int(r["tests"])) for task, r in table3.items()}


def test_every_benchmark_task_is_weighted_by_its_published_loc(shared_datasets: Path) -> None:
    for dataset, source in (("CodeProjectEval", "ProjectGen Table 2"), ("DevBench", "ProjectGen Table 3")):
        tasks = load_dataset(shared_datasets / dataset, on_error="skip")
        assert tasks
        for task in tasks:
            weight = task_weight(task)
            assert weight.source.startswith(source), task.id
    chakin = load_task(shared_datasets / "DevBench" / "chakin")
    assert (task_weight(chakin).loc, chakin.size().loc) == (162, 62)  # the published figure wins


def test_a_task_the_paper_does_not_report_is_weighted_by_its_reference() -> None:
    task = load_task(example_task_path("kvstore"))
    weight = task_weight(task)
    assert weight == type(weight)(loc=task.size().loc, source=REFERENCE_LOC) and weight.loc > 0


def test_benchmark_tasks_carry_the_papers_code_stage_cap(shared_datasets: Path) -> None:
    """ProjectGen lets the code stage take up to 10 rounds on CodeProjectEval and 5 on DevBench; both run the paper
    profile by default."""
    cpe = load_task(shared_datasets / "CodeProjectEval" / "tinydb")
    devbench = load_task(shared_datasets / "DevBench" / "lice")
    assert cpe.settings_profile == {"profile": "paper", "code_iterations": 10}
    assert devbench.settings_profile == {"profile": "paper", "code_iterations": 5}
    assert load_task(example_task_path("kvstore")).settings_profile == {}
