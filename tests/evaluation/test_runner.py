"""The sandboxed runner: outcomes, kills, isolation, and what candidates may not touch."""
from __future__ import annotations

import os
import socket
import textwrap
import threading
from pathlib import Path

import pytest

from projectgen.datasets.task import EnvSpec
from projectgen.evaluation.report import Outcome
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sandbox import NAMESPACES, Limits
from test_support import make_task

GOOD_MODULE = {"calc.py": "def add(a, b):\n    return a + b\n"}


def runner(env_cache: Path, **overrides) -> SandboxRunner:
    settings = RunnerSettings(cache_dir=env_cache, timeout=overrides.pop("timeout", 60), **overrides)
    return SandboxRunner(settings)


def outcomes(report) -> dict[str, Outcome]:
    return {t.nodeid.split("::")[-1]: t.outcome for t in report.tests}


def test_every_outcome_kind_is_reported(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "kinds", {
        "test_kinds.py": """
            import pytest
            from calc import add

            @pytest.fixture
            def broken():
                raise RuntimeError("fixture exploded")

            def test_pass(): assert add(1, 2) == 3
            def test_fail(): assert add(1, 1) == 3
            def test_setup_error(broken): pass
            @pytest.mark.skip(reason="not today")
            def test_skip(): pass
            @pytest.mark.xfail
            def test_xfail(): assert False
            @pytest.mark.xfail
            def test_xpass(): pass
        """,
        "test_broken_import.py": "import no_such_module_anywhere\n",
    })
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert outcomes(report) == {
        "test_pass": Outcome.PASSED, "test_fail": Outcome.FAILED, "test_setup_error": Outcome.ERROR,
        "test_skip": Outcome.SKIPPED, "test_xfail": Outcome.XFAIL, "test_xpass": Outcome.XPASS,
    }
    assert [e.nodeid for e in report.collection_errors] == ["unit_tests/test_broken_import.py"]
    assert "no_such_module_anywhere" in report.collection_errors[0].message
    assert report.passed == 1 and report.total == 7
    assert "assert 2 == 3" in next(t for t in report.tests if t.outcome is Outcome.FAILED).message


def test_endless_test_is_killed_at_timeout_and_earlier_results_are_kept(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "loop", {
        "test_loop.py": """
            import subprocess
            def test_first(): pass
            def test_forever():
                subprocess.Popen(["sleep", "4321.5"])  # a grandchild that must die too
                while True:
                    pass
            def test_never_reached(): pass
        """,
    })
    report = runner(env_cache, timeout=8).evaluate(task, GOOD_MODULE, "unit")
    assert report.timed_out and report.status == "timeout"
    assert report.exit_status is None
    got = outcomes(report)
    assert got["test_first"] is Outcome.PASSED
    assert got["test_forever"] is Outcome.ERROR
    assert "timed out" in next(t.message for t in report.tests if t.nodeid.endswith("test_forever"))
    assert "test_never_reached" not in got
    assert report.total == 3  # collected, so the unreached test still counts against the score
    assert report.duration < 40
    assert _processes_running(b"sleep\x004321.5\x00") == []


def _processes_running(cmdline: bytes) -> list[str]:
    """Host pids whose command line is exactly `cmdline`."""
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if path.read_bytes() == cmdline:
                found.append(path.parent.name)
        except OSError:
            continue
    return found


def test_os_exit_inside_a_test_counts_no_pass_but_keeps_the_failures_recorded_before_it(
        tmp_path: Path, env_cache: Path) -> None:
    """A test process that ends on its own before pytest finished (no finish event from the recorder) leaves
    only its word for the passes it reported: none counts (docs/sandbox.md, "A pass needs positive evidence")."""
    task = make_task(tmp_path / "exit", {
        "test_exit.py": """
            import os
            def test_a(): pass
            def test_b(): assert False
            def test_c(): os._exit(7)
            def test_d(): pass
        """,
    })
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert report.exit_status == 7 and not report.timed_out
    assert outcomes(report) == {"test_a": Outcome.FAILED, "test_b": Outcome.FAILED, "test_c": Outcome.ERROR}
    assert report.total == 4 and report.passed == 0 and report.tampered is None
    assert "finish event" in report.output_tail


def _sandbox_is_available(env_cache: Path) -> bool:
    return runner(env_cache).isolation() == NAMESPACES


class _Listener:
    """A TCP server on the host's loopback that records whether anyone connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()
            except OSError:
                continue

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


NETWORK_TEST = """
    import os, socket
    def test_connect():
        socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=3).close()
"""


def test_tests_cannot_reach_the_network(tmp_path: Path, env_cache: Path) -> None:
    if not _sandbox_is_available(env_cache):
        pytest.skip("namespace sandbox unavailable on this machine")
    listener = _Listener()
    try:
        task = make_task(tmp_path / "net", {"test_net.py": NETWORK_TEST}, env_vars={"PORT": str(listener.port)})
        isolated = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
        # control: the same test with isolation off does reach the host's server
        open_run = runner(env_cache, isolation="none").evaluate(task, GOOD_MODULE, "unit")
    finally:
        listener.close()
    assert outcomes(isolated)["test_connect"] is Outcome.FAILED
    assert outcomes(open_run)["test_connect"] is Outcome.PASSED
    assert listener.connections == 1


def test_home_writes_and_deletions_outside_the_workspace_touch_nothing_real(tmp_path: Path, env_cache: Path) -> None:
    if not _sandbox_is_available(env_cache):
        pytest.skip("namespace sandbox unavailable on this machine")
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    real_home_marker = Path(os.path.expanduser("~")) / "projectgen-sandbox-marker"
    project_file = Path(__file__).resolve().parents[2] / "projectgen-sandbox-marker"
    task = make_task(tmp_path / "fs", {
        "test_fs.py": """
            import os, shutil
            def test_home_is_private():
                with open(os.path.expanduser("~/projectgen-sandbox-marker"), "w") as f:
                    f.write("x")
                assert os.listdir(os.environ["HOME"]) == ["projectgen-sandbox-marker"]  # a fresh, private one
            def test_delete_outside():
                os.remove(os.environ["VICTIM"])
            def test_write_project_folder():
                open(os.environ["PROJECT_FILE"], "w").write("x")
            def test_rmtree_outside():
                shutil.rmtree(os.path.dirname(os.environ["VICTIM"]))
            def test_ssh_keys_hidden():
                assert not os.path.exists(os.path.expanduser("/root/.bashrc"))
            def test_cwd_and_private_tmp_are_writable():
                open("written-in-cwd.txt", "w").write("x")
                open("/tmp/projectgen-sandbox-marker", "w").write("x")
        """,
    }, env_vars={"VICTIM": str(victim), "PROJECT_FILE": str(project_file)})
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    got = outcomes(report)
    assert got["test_home_is_private"] is Outcome.PASSED
    assert got["test_delete_outside"] is Outcome.FAILED
    assert got["test_write_project_folder"] is Outcome.FAILED
    assert got["test_rmtree_outside"] is Outcome.FAILED
    assert got["test_ssh_keys_hidden"] is Outcome.PASSED
    assert got["test_cwd_and_private_tmp_are_writable"] is Outcome.PASSED
    assert victim.read_text() == "keep me"
    assert not real_home_marker.exists() and not project_file.exists()
    assert not Path("/tmp/projectgen-sandbox-marker").exists()  # the sandbox's /tmp is its own


CONTAINMENT_SEEN_INSIDE = """
    import os, resource

    WRITABLE = ["/dev", "/proc"]  # device nodes, pseudo-terminals and /proc (its /proc/sys is read-only)

    def mounts():
        with open("/proc/self/mounts") as table:
            return {line.split()[1]: (line.split()[2], set(line.split()[3].split(","))) for line in table}

    def test_every_mount_but_the_sandboxs_own_disk_is_read_only():
        seen = mounts()
        # the sandbox's own disk may show again where a folder above the suite is pinned (bound onto itself)
        writable_elsewhere = [point for point, (kind, options) in seen.items() if "rw" in options and point != "/"
                              and (kind, options) != seen["/"]
                              and not any(point == w or point.startswith(w + "/") for w in WRITABLE)]
        assert writable_elsewhere == []
        kind, options = seen["/"]  # the root, the workspace, /tmp: one capped tmpfs of the sandbox's own
        assert kind == "tmpfs" and "size=65536k" in options and "nr_inodes=5000" in options
        assert os.access(os.getcwd(), os.W_OK) and (os.getuid() == 0 or not os.access("/", os.W_OK))

    def test_proc_sys_is_read_only_and_keeps_its_flags():
        assert {"ro", "nosuid", "nodev", "noexec"} <= mounts()["/proc/sys"][1]

    def test_no_capabilities_no_new_privileges_under_the_sandboxs_init():
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        assert [status[k].strip() for k in ("CapEff", "CapPrm", "CapInh", "CapBnd")] == ["0" * 16] * 4
        assert status["NoNewPrivs"].strip() == "1"
        assert os.getppid() == 1 and sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()]

    def test_limits():
        assert resource.getrlimit(resource.RLIMIT_AS) == (2**31, 2**31)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (256, 256)
        assert resource.getrlimit(resource.RLIMIT_NPROC) == (64, 64)
        assert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)
"""


def test_inside_the_sandbox_mounts_are_read_only_capabilities_gone_and_limits_set(tmp_path: Path,
                                                                                  env_cache: Path) -> None:
    """What the launcher sets up with its own system calls, seen from the code under test."""
    if not _sandbox_is_available(env_cache):
        pytest.skip("namespace sandbox unavailable on this machine")
    task = make_task(tmp_path / "inside", {"test_inside.py": CONTAINMENT_SEEN_INSIDE})
    limits = Limits(memory_bytes=2**31, open_files=256, processes=64, disk_bytes=64 * 1024**2, disk_inodes=5000)
    report = runner(env_cache, limits=limits).evaluate(task, GOOD_MODULE, "unit")
    assert outcomes(report) == dict.fromkeys(["test_every_mount_but_the_sandboxs_own_disk_is_read_only",
                                              "test_proc_sys_is_read_only_and_keeps_its_flags",
                                              "test_no_capabilities_no_new_privileges_under_the_sandboxs_init",
                                              "test_limits"],
                                             Outcome.PASSED), report.output_tail


def test_a_passed_setup_still_counts_in_the_tests_duration(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "slow-setup", {"test_setup.py": """
        import time, pytest
        @pytest.fixture
        def slow():
            time.sleep(0.3)
        def test_after_a_slow_setup(slow): pass
    """})
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert outcomes(report) == {"test_after_a_slow_setup": Outcome.PASSED}
    assert report.tests[0].duration >= 0.3


def test_lines_written_to_the_results_pipe_by_the_tests_mark_the_run_tampered(tmp_path: Path,
                                                                             env_cache: Path) -> None:
    task = make_task(tmp_path / "junk", {"test_junk.py": """
        import json, os, stat
        def test_before(): pass
        def test_writes_to_every_pipe():
            forged = json.dumps({"event": "report", "nodeid": "unit_tests/test_junk.py::test_after",
                                 "when": "call", "outcome": "passed", "seq": 99}) + "\\tdeadbeef\\n"
            for fd in map(int, os.listdir("/proc/self/fd")):
                try:
                    if stat.S_ISFIFO(os.fstat(fd).st_mode):
                        os.write(fd, b'1\\n[2]\\n' + forged.encode())
                except OSError:
                    pass
        def test_after(): assert False
    """})
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert report.tampered and "did not write" in report.tampered
    assert report.passed == 0 and set(outcomes(report)) == {"test_before", "test_writes_to_every_pipe", "test_after"}
    assert "no test counts as passed" in report.output_tail


def test_candidate_cannot_replace_tests_or_hook_pytest(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "cheat", {"test_real.py": "from calc import add\ndef test_add(): assert add(2, 2) == 4\n"})
    candidate = {
        "calc.py": "def add(a, b):\n    return 0\n",
        "unit_tests/test_real.py": "def test_add(): pass\n",
        "unit_tests/test_extra.py": "def test_free_points(): pass\n",
        "conftest.py": textwrap.dedent("""
            import pytest
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(item, call):
                outcome = yield
                outcome.get_result().outcome = "passed"
        """),
    }
    report = runner(env_cache).evaluate(task, candidate, "unit")
    assert outcomes(report) == {"test_add": Outcome.FAILED}


def test_memory_hog_is_stopped_by_the_limit(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "mem", {
        "test_mem.py": """
            def test_hog():
                blob = bytearray(6 * 1024 ** 3)
                assert blob
            def test_after(): pass
        """,
    })
    report = runner(env_cache, limits=Limits(memory_bytes=1024**3)).evaluate(task, GOOD_MODULE, "unit")
    got = outcomes(report)
    assert got["test_hog"] in (Outcome.FAILED, Outcome.ERROR)
    assert got["test_after"] is Outcome.PASSED


def test_environment_is_built_once_and_reused(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "reuse", {"test_ok.py": "def test_ok(): pass\n"})
    sandbox = runner(env_cache)
    first = sandbox.evaluate(task, GOOD_MODULE, "unit")
    manifest = sandbox.environments.path_for(task.env) / "projectgen-env.json"
    stamp = manifest.stat().st_mtime_ns
    second = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert first.passed == second.passed == 1
    assert manifest.stat().st_mtime_ns == stamp
    assert first.environment and first.environment.key == task.env.cache_key()


def test_unsatisfiable_requirement_is_recorded_not_fatal(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "badreq", {"test_ok.py": "def test_ok(): pass\n"})
    task = task.model_copy(update={"env": EnvSpec(requirements=("projectgen-no-such-package-xyz==9.9.9",))})
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert report.passed == 1
    assert report.environment and report.environment.unsatisfied_requirements == ["projectgen-no-such-package-xyz==9.9.9"]


def test_read_only_task_files_are_writable_in_the_workspace(tmp_path: Path, env_cache: Path) -> None:
    """Benchmark folders are often read-only; tests still rewrite their fixtures."""
    task = make_task(tmp_path / "ro", {"test_rw.py": """
        def test_rewrite_fixture():
            open("data/fixture.txt", "w").write("changed")
            open("data/new.txt", "w").write("new")
    """})
    (task.root / "data").mkdir()
    (task.root / "data" / "fixture.txt").write_text("original")
    task = task.model_copy(update={"required_files": ("data/fixture.txt",)})
    for path in [task.root / "data" / "fixture.txt", task.root / "data", *(task.root / "unit_tests").iterdir(),
                 task.root / "unit_tests"]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    finally:
        for path in (task.root / "data", task.root / "unit_tests"):
            path.chmod(0o755)
    assert outcomes(report) == {"test_rewrite_fixture": Outcome.PASSED}
    assert (task.root / "data" / "fixture.txt").read_text() == "original"


def test_the_same_suite_on_the_same_files_runs_once(tmp_path) -> None:
    """An attempt's score right after the code judge's check on the same repository reuses that report."""
    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task

    task = load_task(example_task_path("kvstore"))
    runner = SandboxRunner(RunnerSettings(timeout=120))
    files = task.reference_repository()
    first = runner.evaluate(task, files, "check")
    again = runner.evaluate(task, dict(files), "check")
    assert runner.recent.hits == 1 and again.passed == first.passed and again.total == first.total
    changed = {**files, "kvstore/__init__.py": files["kvstore/__init__.py"] + "\n# changed\n"}
    runner.evaluate(task, changed, "check")
    runner.evaluate(task, files, "unit")  # another suite runs its own tests
    assert runner.recent.hits == 1
    again.tests.clear()  # a caller changing its copy changes nothing kept
    assert runner.evaluate(task, files, "check").total == first.total and runner.recent.hits == 2


def test_a_suite_that_is_one_test_file_runs_and_a_candidate_cannot_replace_it(tmp_path: Path,
                                                                               env_cache: Path) -> None:
    """An Exercism exercise's suite is its test file beside the solution (pytest refuses a file as
    --confcutdir, so the runner cuts conftest lookup at the file's folder)."""
    from projectgen.datasets.task import Documents, Task, TestSuite

    root = tmp_path / "exercise"
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "calc_test.py").write_text("from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    task = Task(id="calc", root=root, format="taskdir", docs=Documents(prd="add"),
                suites={"unit": TestSuite(name="unit", paths=("calc/calc_test.py",))})
    cheat = "def test_add():\n    pass\n"
    report = runner(env_cache).evaluate(task, {"calc/calc.py": "def add(a, b):\n    return a - b\n",
                                               "calc/calc_test.py": cheat})
    assert report.error is None and report.total == 1 and report.status == "failed", report.output_tail
    good = runner(env_cache).evaluate(task, {"calc/calc.py": GOOD_MODULE["calc.py"]})
    assert good.status == "passed"


def test_a_run_ends_with_pytest_its_exit_functions_run_and_a_stray_thread_does_not_hold_it(
        tmp_path: Path, env_cache: Path) -> None:
    """The bootstrap skips the interpreter's tear-down once pytest returns: the exit status is pytest's, what
    the tests registered with atexit still runs and prints, and a thread a test left running (which a normal
    interpreter exit waits for) does not keep the run going until its timeout."""
    task = make_task(tmp_path / "stray", {
        "test_stray.py": """
            import atexit, threading, time
            def test_leaves_a_thread_and_an_exit_function():
                atexit.register(print, "exit function ran")
                threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
            def test_fails(): assert False
        """,
    })
    report = runner(env_cache, timeout=30).evaluate(task, GOOD_MODULE, "unit")
    assert not report.timed_out and report.exit_status == 1, report.output_tail
    assert outcomes(report) == {"test_leaves_a_thread_and_an_exit_function": Outcome.PASSED,
                                "test_fails": Outcome.FAILED}
    assert report.output_tail.rstrip().endswith("exit function ran"), report.output_tail


def test_pytest_s_final_garbage_collections_are_turned_off_and_results_unchanged(tmp_path: Path,
                                                                                   env_cache: Path) -> None:
    """pytest >= 8.4 ends with full garbage collections that only turn late unraisable exceptions into warnings
    (tens of ms per evaluation, issue 35's overhead gate): the recorder sets pytest's own knob to none. A test
    sees the knob at 0, and an object whose finaliser raises, left in a cycle, changes no result."""
    task = make_task(tmp_path / "gc", {
        "test_gc.py": """
            from _pytest.unraisableexception import gc_collect_iterations_key
            class Cycle:
                def __del__(self): raise RuntimeError("finaliser")
            def test_knob_is_off(request):
                assert request.config.stash.get(gc_collect_iterations_key, None) == 0
            def test_leaves_a_cycle():
                cycle = Cycle(); cycle.me = cycle
            def test_fails(): assert False
        """,
    })
    report = runner(env_cache, timeout=30).evaluate(task, GOOD_MODULE, "unit")
    assert outcomes(report) == {"test_knob_is_off": Outcome.PASSED, "test_leaves_a_cycle": Outcome.PASSED,
                                "test_fails": Outcome.FAILED}, report.output_tail
    assert report.exit_status == 1 and report.tampered is None


def test_every_test_of_a_folder_suite_runs_beside_the_canaries_on_pytest_8(tmp_path: Path, env_cache: Path) -> None:
    """pytest 8 given a folder and a file inside it collects only the file: the canaries, put in the suite's
    folder, must not be named again (flask's and parsel's suites once ran nothing but the canaries)."""
    task = make_task(tmp_path / "pytest8", {
        "conftest.py": "",
        "test_a.py": "def test_a(): pass\n",
        "sub/test_b.py": "def test_b(): assert False\n",
    })
    task = task.model_copy(update={"env": task.env.model_copy(update={"requirements": ("pytest==8.4.2",)})})
    report = runner(env_cache).evaluate(task, GOOD_MODULE, "unit")
    assert report.environment is not None
    assert outcomes(report) == {"test_a": Outcome.PASSED, "test_b": Outcome.FAILED}, report.output_tail
    assert report.collected == 2 and report.tampered is None


def test_a_test_that_sets_the_clock_back_still_counts(tmp_path: Path, env_cache: Path) -> None:
    """A fixture that freezes time in the past (freezegun, as CodeProjectEval cookiecutter's tests do) makes
    pytest's own duration of the phase negative: that is the test's clock, not a forged report, and its tests
    count as they ran."""
    task = make_task(tmp_path / "clock", {
        "test_clock.py": """
            import pytest
            import _pytest.timing as timing

            @pytest.fixture
            def frozen(monkeypatch):
                start = timing.perf_counter()
                monkeypatch.setattr(timing, "perf_counter", lambda: start - 1000.0)
                yield

            def test_in_the_past(frozen):
                assert True

            def test_after():
                assert True
        """,
    })
    report = runner(env_cache).evaluate(task, {}, "unit")
    assert report.tampered is None
    assert outcomes(report) == {"test_in_the_past": Outcome.PASSED, "test_after": Outcome.PASSED}
    assert all(test.duration >= 0 for test in report.tests)
