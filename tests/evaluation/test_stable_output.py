"""What a model is shown of a run is the same for every run of the same candidate (evaluation/stable_output.py):
a resumed run's code judge sends the prompt the killed run sent, so the call cache answers it (the slow
tests/runs/test_kill_resume.py once saw the judge called twice over an object address in a check test's
message). Each normalisation, then the real sandbox run twice on a candidate whose failures carry everything
that changes from run to run."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from projectgen.datasets.task import Task
from projectgen.evaluation.planted_tests import Planting
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner, _shown_output, _shown_printed
from projectgen.evaluation.sandbox_session import OUTPUT_TAIL_CHARS, StepResult, Tail
from projectgen.evaluation.stable_output import (ADDRESS, ENVIRONMENT, HARNESS, SESSION, WORKSPACE, StablePaths,
                                                 message_tail, stable_text, without_addresses,
                                                 without_identity_hashes, without_timings)


# --------------------------------------------------------------------------- each normalisation
def test_object_addresses_and_mock_ids_become_one_token_and_constants_a_test_wrote_stay():
    text = ("assert 'session' not in <kvstore.store.KVStore object at 0x7f6e2ef57f90>\n"
            ".0 = <dict_itemiterator object at 0x1e4f2a0>\n"
            "where <bound method A.f of <A object at 0x7fd1aa>> and <MagicMock name='m.x' id='140234567'>\n"
            "Current thread 0x00007f3a2b1c0740 (most recent call first):\n"
            "assert flags == 0xff and mask == 0xFFFFFFFF and 0x10 < 17")
    assert without_addresses(text) == (
        f"assert 'session' not in <kvstore.store.KVStore object at {ADDRESS}>\n"
        f".0 = <dict_itemiterator object at {ADDRESS}>\n"
        f"where <bound method A.f of <A object at {ADDRESS}>> and <MagicMock name='m.x' id='{ADDRESS}'>\n"
        f"Current thread {ADDRESS} (most recent call first):\n"
        "assert flags == 0xff and mask == 0xFFFFFFFF and 0x10 < 17")


def test_javas_identity_hash_codes_become_one_token_and_an_address_in_text_stays():
    text = "expected: com.example.Point@1b6d3586 but was: Point$Inner@7a81197d; mail ops@example.org"
    assert without_identity_hashes(text) == (f"expected: com.example.Point@{ADDRESS} but was: Point$Inner@{ADDRESS}; "
                                             "mail ops@example.org")


def test_the_times_of_test_run_summaries_are_dropped():
    text = ("===== 1 failed, 2 passed in 0.12s =====\n== 3 passed in 61.07s (0:01:01) ==\nRan 3 tests in 0.001s\n"
            "assert retry_in(5) == '5s'")
    assert without_timings(text) == ("===== 1 failed, 2 passed in N.NNs =====\n== 3 passed in N.NNs ==\n"
                                     "Ran 3 tests in N.NNs\nassert retry_in(5) == '5s'")


def test_the_session_folder_and_the_environment_are_shown_at_fixed_paths(tmp_path: Path):
    session = tmp_path / "projectgen-ws-4242-kvstore-x1y2z3"
    (session / "repo").mkdir(parents=True)
    linked = tmp_path / "link"
    linked.symlink_to(session)
    env = tmp_path / "cache" / "envs" / "py311-abc"
    paths = StablePaths.of([(linked / "repo", WORKSPACE), (linked, SESSION), (env, ENVIRONMENT)])
    text = (f"{linked}/repo/kvstore/store.py:12: in get\n{session}/repo/kvstore/store.py\n"
            f"{linked}/tmp/pytest-of-sandbox/pytest-0/test_x0/data.json\n"
            f"{env}/lib/python3.11/site-packages/pluggy/_hooks.py:501: in __call__")
    assert paths.apply(text) == (
        f"{WORKSPACE}/kvstore/store.py:12: in get\n{WORKSPACE}/kvstore/store.py\n"
        f"{SESSION}/tmp/pytest-of-sandbox/pytest-0/test_x0/data.json\n"
        f"{ENVIRONMENT}/lib/python3.11/site-packages/pluggy/_hooks.py:501: in __call__")


def test_a_planted_modules_line_numbers_read_as_in_the_tasks_file_in_every_form():
    # 3 lines planted after line 10 of the task's file, 2 after its line 20 (the planted copy's 23)
    planting = Planting(inserted={"tests/test_a.py": [(10, 3), (20, 2)]})
    text = ('  File "/workspace/tests/test_a.py", line 27, in test_b\n'
            "tests/test_a.py:27: in test_b\n/workspace/tests/test_a.py:16: AssertionError\n"
            "('/workspace/tests/test_a.py', 9, 'Skipped: no')\n"
            "subtests/test_a.py:27: in test_c\n"  # another module whose path ends alike
            'File "tests/test_a.py", line 12, in test_planted')  # a planted line keeps its number
    assert planting.original_lines(text) == (
        '  File "/workspace/tests/test_a.py", line 22, in test_b\n'
        "tests/test_a.py:22: in test_b\n/workspace/tests/test_a.py:13: AssertionError\n"
        "('/workspace/tests/test_a.py', 9, 'Skipped: no')\n"
        "subtests/test_a.py:27: in test_c\n"
        'File "tests/test_a.py", line 12, in test_planted')


def test_the_end_of_a_long_output_is_shown_alike_whatever_the_length_of_the_session_path(tmp_path: Path):
    """The host keeps the end of the test step's output in bytes, before its paths are made stable: it keeps more
    than is shown, so what is shown does not start where the length of a path put the host's cut."""
    shown = []
    for name in ("projectgen-ws-7-kvstore-a", "projectgen-ws-1234567-kvstore-abcdefgh-and-a-longer-temp-folder"):
        workspace = tmp_path / name / "repo"
        step = SandboxRunner()._tests_step(["pytest"], {}, 1.0, None, "")
        ran = StepResult("tests", output=Tail(step.output_keep))  # as `run_session` keeps it
        for number in range(3000):
            ran.output.feed(f"line {number}: {workspace}/kvstore/store.py\n".encode())
        shown.append(_shown_output([], [], _shown_printed(ran, StablePaths.of([(workspace, WORKSPACE)]))))
    assert shown[0] == shown[1]
    assert shown[0].endswith(f"line 2999: {WORKSPACE}/kvstore/store.py") and len(shown[0]) == OUTPUT_TAIL_CHARS


def test_a_long_message_is_cut_after_its_paths_are_made_stable(tmp_path: Path):
    shown = []
    for name in ("s", "a-much-longer-session-folder"):
        paths = StablePaths.of([(tmp_path / name / "repo", WORKSPACE)])
        message = "".join(f"{n} {tmp_path / name / 'repo'}/pkg/mod.py\n" for n in range(400))
        shown.append(message_tail(stable_text(message, paths)))
    assert shown[0] == shown[1] and shown[0].startswith("...") and len(shown[0]) == 4003


# --------------------------------------------------------------------------- the real sandbox, twice
# A store whose `in` fails with more lines naming the workspace than a message shows, then what differs from one
# run to the next: object addresses and an id, the session's temp folder, a timing. At exit, outside
# pytest's capture, it prints its stack (the paths of the test module, pytest, the bootstrap; the test module's
# line numbers as Python prints them). Only the first call's stack: a later one may come from a planted twin (a copy
# of a real test calling `in`, planted in some runs and not others, under a new name every run), which no run can
# show the same way twice; the first comes from a real test, since a twin runs after its original.
NOISY_CONTAINS = '''
    def __contains__(self, key: object) -> bool:
        import atexit, os, sys, tempfile, time, traceback
        if not getattr(type(self), "stack_said", False):
            type(self).stack_said = True
            stack = "".join(traceback.format_stack())
            atexit.register(lambda: sys.stderr.write("at exit:\\n" + stack))
        noise = "".join(f"{n:03d} {os.getcwd()}/kvstore/store.py {'-' * 30}\\n" for n in range(300))
        raise AssertionError(f"{noise}{object()!r} {hex(id(self))} tmp={tempfile.gettempdir()} "
                             f"took: 1 passed in {time.perf_counter() % 1:.2f}s")
'''


def _noisy(task: Task) -> dict[str, str]:
    repository = task.reference_repository()
    source = repository["kvstore/store.py"]
    plain = "    def __contains__(self, key: object) -> bool:\n        return isinstance(key, str) and bool(key) " \
            "and self.has(key)\n"
    assert plain in source
    return {**repository, "kvstore/store.py": source.replace(plain, NOISY_CONTAINS.lstrip("\n"))}


def _shown(report: TestReport) -> str:
    return "\n".join([*(f"{t.nodeid}\n{t.message}" for t in report.tests), report.output_tail])


@pytest.fixture(scope="module")
def twice(task: Task, env_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> list[TestReport]:
    """The check tests on the noisy store, by two runners whose session folders' paths differ in length (as a
    resumed run's differ: another pid, maybe another machine's temp folder)."""
    root = tmp_path_factory.mktemp("stable")
    candidate = _noisy(task)
    return [SandboxRunner(RunnerSettings(cache_dir=env_cache, workdir=root / workdir)).evaluate(
        task, candidate, "check") for workdir in ("w", "a-longer-work-folder")]


def test_two_runs_of_the_same_candidate_show_the_same_text(twice: list[TestReport]):
    first, second = twice
    assert [t.outcome for t in first.tests].count("failed") == 2
    assert _shown(first) == _shown(second)
    assert first.output_tail == second.output_tail and "at exit:" in first.output_tail


def test_what_is_shown_names_no_run_path_address_timing_or_planted_test(twice: list[TestReport], task: Task):
    shown = _shown(twice[0])
    assert "projectgen-ws-" not in shown and "/tmp/" not in shown and str(Path.cwd()) not in shown
    assert f'File "{WORKSPACE}/check_tests/test_kvstore_check.py", line ' in shown
    assert f'File "{HARNESS}/pytest_bootstrap.py", line ' in shown
    assert f'File "{ENVIRONMENT}/lib/python3.11/site-packages/_pytest/runner.py", line ' in shown
    assert f"tmp={SESSION}/tmp " in shown and f"299 {WORKSPACE}/kvstore/store.py ---" in shown
    assert not re.search(r"0x[0-9a-f]{6,}", shown) and "in N.NNs" in shown
    real = {node.name for node in ast.walk(ast.parse((task.root / "check_tests/test_kvstore_check.py").read_text()))
            if isinstance(node, ast.FunctionDef)}
    assert set(re.findall(r"\bin (test\w+)", shown)) <= real  # every test a frame names is one of the task's


def test_the_test_modules_line_numbers_are_those_of_the_tasks_file(twice: list[TestReport], task: Task):
    """Each `File "...test_kvstore_check.py", line N, in test_x` names a line of test_x in the task's file, with
    or without planted tests above it in the run's copy."""
    source = (task.root / "check_tests/test_kvstore_check.py").read_text()
    spans = {node.name: (node.lineno, node.end_lineno) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.FunctionDef)}
    for report in twice:
        frames = re.findall(r'test_kvstore_check\.py", line (\d+), in (\w+)', _shown(report))
        assert frames
        for line, test in frames:
            assert spans[test][0] <= int(line) <= spans[test][1], (test, line)
