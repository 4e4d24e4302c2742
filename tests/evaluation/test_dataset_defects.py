"""A file the reference reads that the dataset does not ship is reported as the dataset's defect, not hidden."""
from __future__ import annotations

from pathlib import Path

from projectgen.evaluation.dataset_defects import dataset_defects, missing_files
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.experiments.reference_bench import bench_reference

GEOTEXT_ERROR = ("geotext/geotext.py:46: in read_table\n    with io.open(filename, 'r', encoding=encoding) as f:\n"
                 "E   FileNotFoundError: [Errno 2] No such file or directory: "
                 "'/tmp/projectgen-ws-26093-geotext-ew8g1lqi/repo/geotext/data_file/cities15000.txt'")


def report(*, collection: str = "", failure: str = "") -> TestReport:
    return TestReport(task_id="t", suite="unit",
                      collection_errors=[CollectionError(nodeid="unit_tests/test_geotext.py", message=collection)]
                      if collection else [],
                      tests=[TestResult(nodeid="tests/test_a.py::test_a", outcome=Outcome.FAILED, message=failure)]
                      if failure else [])


def test_a_missing_file_inside_the_repository_is_a_defect_unless_the_task_ships_it() -> None:
    assert missing_files(report(collection=GEOTEXT_ERROR)) == ["geotext/data_file/cities15000.txt"]
    assert dataset_defects(report(collection=GEOTEXT_ERROR), {"geotext/geotext.py"}) == [
        "dataset defect: the reference reads geotext/data_file/cities15000.txt, which the dataset does not ship"]
    # Shipped, the file's absence is the harness's (or a candidate's) problem, not the dataset's.
    assert dataset_defects(report(collection=GEOTEXT_ERROR), {"geotext/data_file/cities15000.txt"}) == []
    # A missing file outside the repository (a model download, a home folder) is no dataset defect.
    outside = "FileNotFoundError: [Errno 2] No such file or directory: '/root/.cache/model.bin'"
    assert dataset_defects(report(failure=outside), set()) == []
    assert dataset_defects(report(failure="AssertionError: 1 != 2"), set()) == []


def test_bench_reference_reports_geotexts_missing_data_file(shared_datasets: Path, runner, tmp_path: Path) -> None:
    rows = bench_reference(shared_datasets / "DevBench", runner, tmp_path / "bench", tasks=["geotext", "chakin"])
    by_task = {row.task_id: row for row in rows}
    assert by_task["geotext"].defects == [
        "dataset defect: the reference reads geotext/data_file/cities15000.txt, which the dataset does not ship"]
    assert by_task["geotext"].note.startswith("dataset defect")
    assert by_task["chakin"].defects == [] and by_task["chakin"].passed == by_task["chakin"].total == 1
