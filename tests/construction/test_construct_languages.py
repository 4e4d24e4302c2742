"""An exercise in another language than Python, packaged by construction and run by `execute` in the sandbox."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.construction.execution import execute
from projectgen.datasets.exercism import exercise_task, load_exercise
from projectgen.evaluation.languages.toolchains import probe_toolchain
from projectgen.protocols.exercise_construction.agents import ExerciseDefinition
from projectgen.protocols.exercise_construction.package import write_exercise

GO_TEST = """package digits

import "testing"

func TestSum(t *testing.T) {
\tif got := Sum(1234); got != 10 {
\t\tt.Fatalf("Sum(1234) = %d", got)
\t}
}

func TestZero(t *testing.T) {
\tif got := Sum(0); got != 0 {
\t\tt.Fatalf("Sum(0) = %d", got)
\t}
}
"""
GO_RIGHT = "package digits\n\nfunc Sum(n int) int {\n\ttotal := 0\n\tfor ; n > 0; n /= 10 {\n\t\ttotal += n % 10\n" \
           "\t}\n\treturn total\n}\n"
GO_WRONG = "package digits\n\nfunc Sum(n int) int {\n\treturn n % 10\n}\n"


DEFINITION = ExerciseDefinition(topic="digit sums", project="digit_sum_go", language="go",
                                instructions="Write `Sum(n int) int`, the sum of the decimal digits of n >= 0.",
                                solution_files=["digits.go"], stubs={"digits.go": "package digits\n"},
                                support_files={"go.mod": "module digits\n\ngo 1.19\n"})


def test_a_go_exercise_is_packaged_as_reflect_reads_it(tmp_path: Path) -> None:
    folder = write_exercise(tmp_path, DEFINITION, {"digits_test.go": GO_TEST}, {"digits.go": GO_RIGHT})
    exercise = load_exercise(folder)
    assert (exercise.language, exercise.solution, exercise.tests) == ("go", ("digits.go",), ("digits_test.go",))
    assert exercise.reference() == {"digits.go": GO_RIGHT} and exercise.stubs() == {"digits.go": "package digits\n"}
    assert exercise.support_files() == ("go.mod",)
    task = exercise_task(exercise)
    assert task.language == "go" and task.required_files == ("digit_sum_go/go.mod",)


@pytest.mark.slow
def test_a_go_exercise_runs_in_the_sandbox_pass_fail_and_build_error(tmp_path: Path, runner) -> None:
    """About 17 s (three go test builds); the packaging is checked fast above, execute() on Python elsewhere."""
    if not probe_toolchain("go").ready:
        pytest.skip("no Go toolchain here")
    exercise = load_exercise(write_exercise(tmp_path, DEFINITION, {"digits_test.go": GO_TEST}, {"digits.go": GO_RIGHT}))
    task = exercise_task(exercise)
    suite = {exercise.workspace_path("digits_test.go"): GO_TEST}
    right = execute(runner, task, exercise.candidate({"digits.go": GO_RIGHT}), suite)
    wrong = execute(runner, task, exercise.candidate({"digits.go": GO_WRONG}), suite)
    assert right.all_passed and right.total == 2
    assert wrong.anomaly is None and wrong.passed == 1 and wrong.total == 2
    broken = execute(runner, task, exercise.candidate({"digits.go": "package digits\n\nfunc Sum(\n"}), suite)
    assert broken.anomaly is not None and broken.anomaly.startswith("build")
