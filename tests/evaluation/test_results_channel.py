"""The recorder's events as the runner reads them: signed, numbered, and a patched framework said once."""
from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import platform
import shutil
import site
import subprocess
import sys
from pathlib import Path

import _pytest.python
import pytest

from projectgen.evaluation.results_channel import Canary, ChannelReader, read_channel, sign
from projectgen.evaluation import sandbox
from projectgen.evaluation.sandbox import compile_recorder, sandbox_file

SECRET = b"s" * 64


@pytest.fixture
def recorder_module():
    sys.path.insert(0, str(sandbox_file("projectgen_results.py").parent))
    try:
        import projectgen_results

        yield projectgen_results
    finally:
        sys.path.remove(str(sandbox_file("projectgen_results.py").parent))
        sys.modules.pop("projectgen_results", None)


class FakeSession:
    exitstatus = 0


def signed(event: dict) -> bytes:
    line = json.dumps(event).encode()
    return line + b"\t" + sign(SECRET, line) + b"\n"


def recorded(recorder_module, act) -> list[dict]:
    """What a recorder writes while `act(recorder)` runs, as the runner reads it."""
    read, write = os.pipe()
    try:
        recorder = recorder_module.recorder(write, hmac.new(SECRET, digestmod=hashlib.sha256), "test_canary.py")
        act(recorder)
        os.close(write)
        data = b""
        while chunk := os.read(read, 1 << 16):
            data += chunk
    finally:
        os.close(read)
    channel = read_channel(data, SECRET)
    return [*channel.events, *([{"tampered": channel.tampered}] if channel.tampered else [])]


def test_signed_events_in_order_are_read_and_a_cut_last_line_is_dropped(recorder_module) -> None:
    events = recorded(recorder_module, lambda r: [r.pytest_runtest_logstart("t::a", None),
                                                  r.pytest_sessionfinish(FakeSession(), 0)])
    assert [e["event"] for e in events] == ["start", "finish"]
    line = b'{"event": "start", "nodeid": "t::a", "seq": 1}'
    whole = line + b"\t" + sign(SECRET, line) + b"\n"
    assert read_channel(whole + whole[:20], SECRET).tampered is None  # killed in the middle of a line


def test_lines_fed_in_pieces_read_as_the_whole_and_nothing_is_taken_past_the_limit() -> None:
    """The runner checks the lines while the tests run, as its reads cut them; a line split between two reads
    is one line."""
    lines = [b'{"event": "start", "nodeid": "t::%d", "seq": %d}' % (n, n + 1) for n in range(5)]
    data = b"".join(line + b"\t" + sign(SECRET, line) + b"\n" for line in lines)
    reader = ChannelReader(SECRET)
    for start in range(0, len(data), 7):
        reader.feed(data[start:start + 7])
    assert reader.result() == read_channel(data, SECRET)
    assert [e["nodeid"] for e in reader.result().events] == [f"t::{n}" for n in range(5)]
    capped = ChannelReader(SECRET, limit=len(data) // 2)
    capped.feed(data[:len(data) // 3])
    capped.feed(data[len(data) // 3:])  # past the limit: dropped, and so is all that follows
    capped.feed(b"")
    assert capped.overflow and capped.result().tampered is None
    assert len(capped.result().events) < 5


@pytest.mark.parametrize("forged", [
    b'{"event": "report", "nodeid": "t::a", "when": "call", "outcome": "passed", "seq": 1}\tdeadbeef\n',
    b'{"event": "report", "nodeid": "t::a", "when": "call", "outcome": "passed", "seq": 1}\n',
    b"1\n",
])
def test_a_line_the_recorder_did_not_sign_marks_the_run_tampered(forged: bytes) -> None:
    assert "did not write" in read_channel(forged, SECRET).tampered


def test_a_replayed_event_marks_the_run_tampered() -> None:
    line = b'{"event": "start", "nodeid": "t::a", "seq": 1}'
    signed = line + b"\t" + sign(SECRET, line) + b"\n"
    assert "replayed" in read_channel(signed + signed, SECRET).tampered


def test_the_framework_patched_from_outside_the_environment_is_said_once(recorder_module) -> None:
    original = _pytest.python.Function.runtest

    def patched(self):  # defined in this test file: code under test, as far as the recorder can tell
        return None

    def act(recorder) -> None:
        _pytest.python.Function.runtest = patched
        try:
            recorder.check(force=True)
            recorder.check(force=True)
        finally:
            _pytest.python.Function.runtest = original

    events = recorded(recorder_module, act)
    assert events == [{"tampered": "the test framework was patched: Function.runtest was changed while the "
                                   "tests ran"}]


def test_a_plugin_of_the_environment_may_patch_the_framework_while_tests_run(recorder_module) -> None:
    """pytest-django swaps TestCaseFunction.runtest around each unittest test: its code is the environment's."""
    original = _pytest.python.Function.runtest
    in_site_packages = os.path.join(site.getsitepackages()[0], "some_plugin.py")
    namespace: dict = {}
    exec(compile("def runtest(self):\n    return None\n", in_site_packages, "exec"), namespace)

    def act(recorder) -> None:
        _pytest.python.Function.runtest = namespace["runtest"]
        try:
            recorder.check(force=True)
        finally:
            _pytest.python.Function.runtest = original

    assert recorded(recorder_module, act) == []


def test_a_canary_is_told_by_its_module_in_the_suites_folder() -> None:
    canary = Canary.make()
    assert canary.owns(f"unit_tests/{canary.module}::test_x", "unit_tests")
    assert canary.owns(f"{canary.module}::Test::test_x", "")
    assert not canary.owns(f"unit_tests/{canary.module}x::test_x", "unit_tests")
    assert not canary.owns("unit_tests/test_real.py::test_x", "unit_tests")
    assert canary.source.count("def test_") == 2 and "assertEqual" in canary.source


def test_the_recorder_is_compiled_beside_it_for_an_environment_on_the_runners_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test process imports the recorder from the sandbox's read-only folder: without its bytecode there
    (an editable checkout has none), every evaluation compiled it again."""
    copy = tmp_path / "projectgen_results.py"
    shutil.copy(sandbox_file("projectgen_results.py"), copy)
    monkeypatch.setattr(sandbox, "sandbox_file", lambda name: tmp_path / name)
    compiled = Path(importlib.util.cache_from_source(str(copy)))
    compile_recorder("2.7.18")  # another interpreter's bytecode would not be read: nothing written
    assert not compiled.exists()
    compile_recorder(platform.python_version())
    assert compiled.is_file()
    written = compiled.read_bytes()
    compile_recorder(platform.python_version())  # current: left as it is
    assert compiled.read_bytes() == written
    copy.write_text(copy.read_text() + "\n# changed\n")  # a newer source: its bytecode is written again
    os.utime(copy, (copy.stat().st_mtime + 5, copy.stat().st_mtime + 5))
    compile_recorder(platform.python_version())
    header = compiled.read_bytes()[:16]  # what the import system checks before it uses the .pyc
    assert header[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(header[8:12], "little") == int(copy.stat().st_mtime)
    assert int.from_bytes(header[12:16], "little") == copy.stat().st_size


@pytest.mark.parametrize("payload", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"event": "start", "nodeid": "t::a", "seq": 1' + b"\xff" + b"}",
    b'["start"]',
    b'{"event": "start", "nodeid": 7, "seq": 1}',
    b'{"event": "collected", "count": true, "nodeids": [], "seq": 1}',
    b'{"event": "collected", "count": 1, "nodeids": [{"a": 1}], "seq": 1}',
    b'{"event": "report", "nodeid": "t::a", "when": "call", "outcome": "passed", "duration": NaN, '
    b'"wasxfail": false, "message": "", "seq": 1}',
    b'{"event": "report", "nodeid": "t::a", "when": "call", "outcome": "passed", "seq": 1}',
    b'{"event": "won", "seq": 1}',
    b'{"event": "start", "nodeid": "t::a", "seq": "1"}',
    b'{"event": "coverage", "percent": 150.0, "seq": 1}',
    b'{"event": "coverage", "percent": NaN, "seq": 1}',
    b'{"event": "coverage", "percent": 50.0, "problem": "both", "seq": 1}',
    b'{"event": "coverage", "seq": 1}',
], ids=["100,000 deep", "not UTF-8", "a list", "nodeid not a string", "count a bool", "node ids not strings",
        "duration NaN", "fields missing", "unknown kind", "seq a string", "coverage over 100", "coverage NaN",
        "coverage and a problem", "coverage without either"])
def test_a_signed_line_that_is_not_a_recorder_event_marks_the_run_tampered_and_never_raises(payload: bytes) -> None:
    channel = read_channel(payload + b"\t" + sign(SECRET, payload) + b"\n", SECRET)
    assert channel.tampered and channel.events == []


def test_an_event_after_the_finish_event_marks_the_run_tampered() -> None:
    events = [{"event": "finish", "exitstatus": 0, "seq": 1}, {"event": "start", "nodeid": "t::a", "seq": 2}]
    assert "after its finish" in read_channel(b"".join(signed(event) for event in events), SECRET).tampered


def test_the_recorder_has_nothing_to_flip_and_keeps_no_secret(recorder_module) -> None:
    """No attribute steers it (no emit to shadow, no `tampered` switch, no key or pipe to read): what it holds
    is in closures, the secret only as an HMAC object."""
    original = _pytest.python.Function.runtest

    def patched(self):
        return None

    def act(recorder) -> None:
        for name, value in (("emit", print), ("tampered", True), ("pytest_runtest_logreport", print)):
            with pytest.raises(AttributeError):
                setattr(recorder, name, value)
        assert not any(hasattr(recorder, name) for name in ("key", "secret", "fd", "emit", "tampered"))
        _pytest.python.Function.runtest = patched
        try:
            recorder.check(force=True)
        finally:
            _pytest.python.Function.runtest = original

    events = recorded(recorder_module, act)
    assert events == [{"tampered": "the test framework was patched: Function.runtest was changed while the "
                                   "tests ran"}]


def test_tracing_installed_by_code_under_test_is_said_but_not_by_the_environment(recorder_module) -> None:
    """The audit hook judges who asked: this file is code under test as far as the recorder can tell, a file of
    the test environment's site-packages (coverage, a debugger plugin) is not."""
    namespace: dict = {}
    exec(compile("def install(audit):\n    audit('sys.settrace', ())\n",
                 os.path.join(site.getsitepackages()[0], "coverage_like.py"), "exec"), namespace)

    def act(recorder) -> None:
        namespace["install"](recorder.audit)
        recorder.audit("sys._getframe", ())
        recorder.audit("sys.addaudithook", ())

    assert recorded(recorder_module, act) == [
        {"tampered": "the test framework was patched: sys.addaudithook was called by code under test "
                     "(test_results_channel.py)"}]


def test_a_plugin_registered_after_configure_by_code_under_test_is_said(recorder_module) -> None:
    """A hookwrapper that turns failures into passes, registered through the public API; a conftest module
    of the suite's, registered as pytest registers one, is not."""
    import types

    from _pytest.config import PytestPluginManager

    class Passes:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            yield

    conftest = types.ModuleType("conftest")
    conftest.__file__ = "/workspace/unit_tests/conftest.py"
    exec(compile("def pytest_runtest_setup(item):\n    pass\n", conftest.__file__, "exec"), vars(conftest))

    def act(recorder) -> None:
        manager = PytestPluginManager()
        recorder.pytest_configure(types.SimpleNamespace(pluginmanager=manager))
        manager.register(conftest, "conftest")
        recorder.check(force=True)
        manager.register(Passes(), "passes")
        recorder.check(force=True)

    assert recorded(recorder_module, act) == [
        {"tampered": "the test framework was patched: a pytest plugin was added or changed while the tests ran: "
                     "pytest_runtest_makereport of 'passes'"}]


def test_a_plugin_unregistered_and_registered_again_is_accepted_but_one_left_out_is_said(recorder_module) -> None:
    """flask's suite unregisters pytest's logging plugin for a test and registers it again; pytest's `python`
    plugin left unregistered (its pytest_pyfunc_call runs the test functions) is not a suite's doing."""
    import types

    from _pytest.config import PytestPluginManager

    def act(recorder) -> None:
        manager = PytestPluginManager()
        manager.import_plugin("_pytest.python")
        manager.import_plugin("_pytest.logging")
        recorder.pytest_configure(types.SimpleNamespace(pluginmanager=manager))
        logging_plugin = manager.unregister(name="_pytest.logging")
        recorder.check(force=False)
        manager.register(logging_plugin, "_pytest.logging")
        recorder.check(force=True)
        manager.unregister(name="_pytest.python")
        recorder.check(force=True)

    events = recorded(recorder_module, act)
    assert len(events) == 1 and events[0]["tampered"].startswith(
        "the test framework was patched: a pytest hook implementation was removed while the tests ran: ")
    assert events[0]["tampered"].endswith(" of '_pytest.python'")


@pytest.mark.parametrize("isolated", [False, True], ids=["-s", "-I"])
def test_the_bootstrap_imports_its_recorder_with_or_without_isolated_mode(tmp_path: Path, isolated: bool) -> None:
    """The launcher may start the test interpreter with `-I`, which leaves the script's folder off the path: the
    bootstrap puts it there itself, and takes it away before the tests' paths go in."""
    (tmp_path / "test_one.py").write_text("import sys\n\ndef test_ok():\n    assert 'projectgen_results' in "
                                          "sys.modules\n\ndef test_bad():\n    assert False\n")
    results_read, results_write = os.pipe()
    secret_read, secret_write = os.pipe()
    os.write(secret_write, SECRET)
    os.close(secret_write)
    env = dict(os.environ, PROJECTGEN_RESULTS_FD=str(results_write), PROJECTGEN_SECRET_FD=str(secret_read),
               PROJECTGEN_CANARY="test_none.py", PROJECTGEN_IMPORT_PATHS=str(tmp_path),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    process = subprocess.Popen([sys.executable, "-I" if isolated else "-s", str(sandbox_file("pytest_bootstrap.py")),
                                "test_one.py", "-q", "-p", "no:cacheprovider"], cwd=tmp_path, env=env,
                               pass_fds=(results_write, secret_read), stdout=subprocess.DEVNULL)
    os.close(results_write)
    os.close(secret_read)
    data = b""
    while chunk := os.read(results_read, 1 << 16):
        data += chunk
    os.close(results_read)
    assert process.wait() == 1
    channel = read_channel(data, SECRET)
    assert channel.tampered is None
    reports = {(e["nodeid"], e["when"]): e["outcome"] for e in channel.events if e["event"] == "report"}
    assert reports[("test_one.py::test_ok", "call")] == "passed"
    assert reports[("test_one.py::test_bad", "call")] == "failed"
    assert channel.events[-1] == {"event": "finish", "exitstatus": 1, "seq": len(channel.events)}


class FakeCoverage:
    """What the recorder asks of coverage.py's `Coverage`: stop, then the total % of `report`."""

    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    def report(self, file) -> float:
        assert self.stopped  # measured up to the end of the tests, not while reporting
        return 79.38931297709924


def test_the_recorder_sends_the_coverage_it_was_given_before_its_finish_event(recorder_module) -> None:
    def events(coverage) -> list[dict]:
        read, write = os.pipe()
        try:
            recorder = recorder_module.recorder(write, hmac.new(SECRET, digestmod=hashlib.sha256), "test_canary.py",
                                                coverage)
            recorder.pytest_sessionfinish(FakeSession(), 0)
            os.close(write)
            data = os.read(read, 1 << 16)
        finally:
            os.close(read)
        channel = read_channel(data, SECRET)
        assert channel.tampered is None
        return [{key: value for key, value in event.items() if key != "seq"} for event in channel.events]

    assert events(FakeCoverage()) == [{"event": "coverage", "percent": 79.38931297709924},
                                      {"event": "finish", "exitstatus": 0}]
    assert events("coverage.py is not installed in the task's environment") == [
        {"event": "coverage", "problem": "coverage.py is not installed in the task's environment"},
        {"event": "finish", "exitstatus": 0}]
    assert events(None) == [{"event": "finish", "exitstatus": 0}]  # not asked: nothing said
