"""Scores a candidate cannot fake: each attack class, written as generated code would write it.

Against DevBench `lice` (skipped without ../shared/datasets), every attack is the weak stub
candidate plus the attack: it must score no more than the stub alone, and read nothing it must
never see. The second half are small tasks whose own tests try the same (the hidden suite stashed
for a later check run, the task folder, host sockets). Each of these scored in full, or leaked,
before the sandbox had its own root, IPC namespace and signed results pipe.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.evaluation.planted_tests import TWIN_REASON
from projectgen.evaluation.report import Outcome
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

# Forges a pass for every test function it can find, on every pipe it holds and in the results file
# an older sandbox named in the environment.
FORGE = '''
import json as _json, os as _os, re as _re, stat as _stat
def _forge():
    lines = []
    for folder, _dirs, files in _os.walk(_os.getcwd()):
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                rel = _os.path.relpath(_os.path.join(folder, name), _os.getcwd())
                try:
                    source = open(_os.path.join(folder, name)).read()
                except OSError:
                    continue
                for test in _re.findall(r"^def (test_\\w+)", source, _re.M):
                    nodeid = rel + "::" + test
                    lines.append({"event": "start", "nodeid": nodeid})
                    for when in ("call", "teardown"):
                        lines.append({"event": "report", "nodeid": nodeid, "when": when, "outcome": "passed",
                                      "duration": 0.0, "wasxfail": False, "message": ""})
    data = "".join(_json.dumps(line) + "\\n" for line in lines).encode()
    target = _os.environ.get("PROJECTGEN_RESULTS_FILE")
    if target:
        with open(target, "ab") as results:
            results.write(data)
    for fd in range(3, 256):
        try:
            if _stat.S_ISFIFO(_os.fstat(fd).st_mode):
                _os.write(fd, data)
        except OSError:
            pass
'''

PATCH_REPORTS = '''
import _pytest.reports as _reports
_made = _reports.TestReport.from_item_and_call.__func__
def _passed(cls, item, call):
    report = _made(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report
_reports.TestReport.from_item_and_call = classmethod(_passed)
'''

PATCH_RUNTEST = '''
import _pytest.python as _python
_python.Function.runtest = lambda self: None
'''

PATCH_CODE = '''
import _pytest.python as _python
_python.Function.runtest.__code__ = (lambda self: None).__code__
'''

STEAL_REFERENCE = '''
import os as _os
def _steal():
    mine = _os.path.realpath(__file__)
    for folder, dirs, files in _os.walk("/"):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        if folder.endswith("/lice") and "core.py" in files and _os.path.realpath(folder) != _os.path.dirname(mine):
            try:
                source = open(_os.path.join(folder, "core.py")).read()
            except OSError:
                continue
            if "def main" in source:
                exec(compile(source, "stolen", "exec"), globals())
                return
_steal()
'''


# -- attacks on the recorder from the candidate's own import (round 2) --------------------------------------
# Each targets projectgen's recorder as a candidate that read its source would, and turns only the suite's
# failures into passes (a test of the suite names its file; the canaries' do not), so the canaries still fail.
FIND_RECORDER = '''
import gc as _gc, sys as _sys
def _recorder():
    for found in _gc.get_objects():
        if type(found).__name__ == "Recorder" and type(found).__module__ == "projectgen_results":
            return found
def _closure(function):
    return dict(zip(function.__code__.co_freevars, (cell.cell_contents for cell in function.__closure__ or ())))
def _emitter():
    """The recorder's own signing writer: its method, or the closure its hooks call."""
    recorder = _recorder()
    emit = getattr(recorder, "emit", None)
    return emit if emit is not None else _closure(type(recorder).pytest_runtest_logstart)["emit"]
def _is_suite_test(nodeid):
    return nodeid.startswith("unit_tests/test_lice.py")
def _suite_ids():
    import os, re
    ids, klass = [], None
    for line in open(os.path.join(os.getcwd(), "unit_tests", "test_lice.py")).read().splitlines():
        found = re.match(r"class (Test\\w*)", line)
        if found:
            klass = found.group(1)
            continue
        found = re.match(r"(\\s*)def (test\\w*)", line)
        if found and found.group(1) and klass:
            ids.append("unit_tests/test_lice.py::%s::%s" % (klass, found.group(2)))
        elif found and not found.group(1):
            klass = None
            ids.append("unit_tests/test_lice.py::" + found.group(2))
    return ids
'''

PLUGIN_THROUGH_GC = '''
def _register():
    import pytest as _pytest
    from _pytest.config import Config as _Config
    class _Passes:
        @_pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            if _is_suite_test(item.nodeid) and report.failed:
                report.outcome, report.longrepr = "passed", None
    for found in _gc.get_objects():
        if isinstance(found, _Config):
            found.pluginmanager.register(_Passes(), "passes")
            return
_register()
'''

HOLLOW_TEST_MODULE = '''
def _hollow():
    frame = _sys._getframe(1)
    while frame is not None and not frame.f_globals.get("__name__", "").rpartition(".")[2].startswith("test_"):
        frame = frame.f_back
    if frame is None:
        return
    names = frame.f_globals
    def _tracer(seen, event, arg):
        if event == "return" and seen is frame:
            for name, value in list(names.items()):
                if name.startswith("test") and callable(value) and not isinstance(value, type):
                    names[name] = lambda *args, **kwargs: None
                elif name.startswith("Test") and isinstance(value, type):
                    for member in list(vars(value)):
                        if member.startswith("test"):
                            setattr(value, member, lambda self, *args, **kwargs: None)
            _sys.settrace(None)
        return _tracer
    frame.f_trace = _tracer
    _sys.settrace(lambda *args: None)
_hollow()
'''

SHADOW_EMIT = '''
def _shadow():
    recorder = _recorder()
    emit = recorder.emit
    def _passing(**event):
        if event.get("event") == "report" and _is_suite_test(event.get("nodeid", "")):
            event.update(outcome="passed", message="")
        return emit(**event)
    recorder.emit = _passing
try:
    _shadow()
except Exception:
    pass
'''

SILENCE_THEN_PATCH = '''
def _silence():
    import _pytest.python, _pytest.unittest
    try:
        _recorder().tampered = True
    except Exception:
        pass
    for owner in (_pytest.python.Function, _pytest.unittest.TestCaseFunction):
        def _runtest(self, _real=owner.runtest):
            return None if _is_suite_test(self.nodeid) else _real(self)
        owner.runtest = _runtest
_silence()
'''

MAIN_FRAME_STREAM = '''
def _forge_from_main():
    import hashlib, hmac, json, os
    frame = _sys._getframe()
    while frame is not None and "secret" not in frame.f_locals:
        frame = frame.f_back
    if frame is None:
        return
    secret, fd, sequence = frame.f_locals["secret"], frame.f_locals["results_fd"], frame.f_locals["recorder"].sequence
    ids = _suite_ids()
    events = [{"event": "collected", "count": len(ids), "nodeids": ids}]
    for nodeid in ids:
        events.append({"event": "start", "nodeid": nodeid})
        for when in ("call", "teardown"):
            events.append({"event": "report", "nodeid": nodeid, "when": when, "outcome": "passed", "duration": 0.0,
                           "wasxfail": False, "message": ""})
    events.append({"event": "finish", "exitstatus": 0})
    for event in events:
        sequence += 1
        event["seq"] = sequence
        payload = json.dumps(event).encode()
        os.write(fd, payload + b"\\t" + hmac.new(secret, payload, hashlib.sha256).hexdigest()[:32].encode() + b"\\n")
    os._exit(0)
_forge_from_main()
'''


def _signed_stream(finish: bool) -> str:
    """All the suite's tests passed, written with the recorder's own signing writer, the canaries left out;
    then the process ends at once."""
    return """
def _forge_signed():
    import os
    emit = _emitter()
    ids = _suite_ids()
    emit(event="collected", count=len(ids), nodeids=ids)
    for nodeid in ids:
        emit(event="start", nodeid=nodeid)
        for when in ("call", "teardown"):
            emit(event="report", nodeid=nodeid, when=when, outcome="passed", duration=0.0, wasxfail=False, message="")
    if %r:
        emit(event="finish", exitstatus=0)
    os._exit(0)
_forge_signed()
""" % finish


DEEP_JSON_LINE = '''
def _deep_line():
    import hashlib, hmac, os
    recorder = _recorder()
    payload = b"[" * 100000 + b"]" * 100000
    if hasattr(recorder, "key"):
        signature, fd = hmac.new(recorder.key, payload, hashlib.sha256), recorder.fd
    else:
        held = _closure(_closure(type(recorder).pytest_runtest_logstart)["emit"])
        signature, fd = held["mac"].copy(), held["fd"]
        signature.update(payload)
    os.write(fd, payload + b"\\t" + signature.hexdigest()[:32].encode() + b"\\n")
_deep_line()
'''


# Every value the package returns equals anything: each `assert f(x) == expected` passes.
ALWAYS_EQUAL = '''
class _Anything(str):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__
'''

# When a test module imports the package, a trace function waits for the module's body to finish, then swaps
# its test functions and the test methods of its classes for ones that do nothing (signatures kept, so pytest
# still hands them their fixtures).
HOLLOW_TESTS = '''
import functools as _functools, sys as _sys
def _does_nothing(original):
    @_functools.wraps(original)
    def passes(*args, **kwargs):
        return None
    return passes
def _hollow(namespace):
    for name, value in list(namespace.items()):
        if name.startswith("test") and callable(value):
            namespace[name] = _does_nothing(value)
        elif name.startswith("Test") and isinstance(value, type):
            for member, inner in list(vars(value).items()):
                if member.startswith("test") and callable(inner):
                    setattr(value, member, _does_nothing(inner))
def _watch_importer():
    frame = _sys._getframe(1)
    while frame is not None and not frame.f_globals.get("__name__", "").rpartition(".")[2].startswith("test"):
        frame = frame.f_back
    if frame is None:
        return
    previous = _sys.gettrace()
    def local(frame_, event, arg):
        if event == "return":
            _hollow(frame_.f_globals)
            _sys.settrace(previous)
        return local
    frame.f_trace = local
    _sys.settrace(previous or (lambda *args: None))
_watch_importer()
'''

# A plugin found through the garbage collector turns the failures of test modules importing the package into
# passes (tests of other modules, a canary module of their own, stay as they are).
GC_HOOKWRAPPER = '''
import gc as _gc, pytest as _pytest
class _Passes:
    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        module = getattr(item, "module", None)
        if report.failed and any(getattr(value, "__name__", "").startswith("lice")
                                 for value in vars(module or object).values()):
            report.outcome, report.longrepr = "passed", None
for _manager in _gc.get_objects():
    if type(_manager).__name__ == "PytestPluginManager":
        _manager.register(_Passes())
'''

# The recorder's own signing, found through the garbage collector: its instance's `emit` (the class's functions
# are watched, an instance attribute is not) now says "passed" for every report of the test module importing
# the package, and leaves every other module (a canary module of the runner's) as it was.
FORGE_SIGNED = '''
import gc as _gc
def _sign_passes():
    for _recorder in _gc.get_objects():
        if type(_recorder).__name__ == "Recorder" and hasattr(_recorder, "key"):
            _emit = _recorder.emit
            def _passes(_emit=_emit, **event):
                if event.get("event") == "report" and event.get("nodeid", "").startswith("unit_tests/test_lice.py"):
                    event.update(outcome="passed", message="")
                return _emit(**event)
            _recorder.emit = _passes
_sign_passes()
'''


def returning(source: str, value: ast.expr | None = None) -> str:
    """The module with every function body replaced by `return VALUE` (None: DevBench's weak stub, 8/25 on lice)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Return(value=value)]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def stub(source: str) -> str:
    """The module with every function body replaced by `raise NotImplementedError` (what a skeleton holds)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Raise(exc=ast.Call(func=ast.Name("NotImplementedError", ast.Load()), args=[], keywords=[]),
                                   cause=None)]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


@pytest.fixture(scope="module")
def lice(shared_datasets: Path) -> Task:
    return load_task(shared_datasets / "DevBench" / "lice")


def namespaced_runner(settings: RunnerSettings) -> SandboxRunner:
    """A runner with `settings`; skips the test where the namespace sandbox is not available."""
    runner = SandboxRunner(settings)
    if runner.isolation() != "namespaces":
        pytest.skip("the namespace sandbox is not available here")
    return runner


@pytest.fixture(scope="module")
def lice_runner(env_cache: Path) -> SandboxRunner:
    return namespaced_runner(RunnerSettings(cache_dir=env_cache, timeout=120))


@pytest.fixture(scope="module")
def lice_stub(lice: Task) -> dict[str, str]:
    return {rel: stub(path.read_text(encoding="utf-8")) for rel, path in lice.reference_files().items()}


@pytest.fixture(scope="module")
def stub_score(lice: Task, lice_runner: SandboxRunner, lice_stub: dict[str, str]) -> int:
    scored = lice_runner.score(lice, lice_stub, "unit")
    assert scored.score.expected == 25 and scored.score.passed < 25
    return scored.score.passed


ATTACKS = {
    "a repo-root pytest.py": {"pytest.py": FORGE + "_forge()\nraise SystemExit(0)\n"},
    "a repo-root sitecustomize.py": {"sitecustomize.py": FORGE + "_forge()\nimport os\nos._exit(0)\n"},
    "a repo-root usercustomize.py": {"usercustomize.py": FORGE + "_forge()\nimport os\nos._exit(0)\n"},
    "a recorder of its own": {"projectgen_results.py": FORGE + "_forge()\nimport os\nos._exit(0)\n"},
    "a _pytest package of its own": {"_pytest/__init__.py": FORGE + "_forge()\nimport os\nos._exit(0)\n"},
    "reports patched at import": {"lice/__init__.py": PATCH_REPORTS},
    "the run protocol patched at import": {"lice/__init__.py": PATCH_RUNTEST},
    "the run protocol's code swapped at import": {"lice/__init__.py": PATCH_CODE},
    "results forged at exit": {"lice/__init__.py": FORGE + "import atexit\natexit.register(_forge)\n"},
    "results forged at import": {"lice/__init__.py": FORGE + "_forge()\n"},
    "the reference found on the host": {"lice/__init__.py": STEAL_REFERENCE},
    "a plugin registered through gc": {"lice/__init__.py": FIND_RECORDER + PLUGIN_THROUGH_GC},
    "the test module hollowed out by a trace function": {"lice/__init__.py": FIND_RECORDER + HOLLOW_TEST_MODULE},
    "the recorder's emit shadowed on the instance": {"lice/__init__.py": FIND_RECORDER + SHADOW_EMIT},
    "the recorder's check silenced, then the run protocol patched": {
        "lice/__init__.py": FIND_RECORDER + SILENCE_THEN_PATCH},
    "a signed stream from the bootstrap's frame, without the canaries": {
        "lice/__init__.py": FIND_RECORDER + MAIN_FRAME_STREAM},
    "a signed stream from the recorder's writer, without the canaries": {
        "lice/__init__.py": FIND_RECORDER + _signed_stream(finish=True)},
    "a signed stream cut short by os._exit": {"lice/__init__.py": FIND_RECORDER + _signed_stream(finish=False)},
    "a signed line nested 100,000 deep": {"lice/__init__.py": FIND_RECORDER + DEEP_JSON_LINE},
}

# What the report says of the attacks of round 2 that still run to the end against today's recorder (the
# others find no `emit`, `tampered` or secret to use, and score as the stub).
SAID = {
    "a plugin registered through gc": "a pytest plugin was added or changed while the tests ran",
    "the test module hollowed out by a trace function": "sys.settrace was called by code under test",
    "the recorder's check silenced, then the run protocol patched": "runtest was changed while the tests ran",
    # it signs a pass for every test it finds in the suite's modules: the twins and canaries planted there too
    "a signed stream from the recorder's writer, without the canaries": "outcomes were turned into passes",
    "a signed stream cut short by os._exit": "without the test recorder's finish event",
    "a signed line nested 100,000 deep": "a signed line of the results pipe does not parse",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_scores_no_more_than_the_stub(attack: str, lice: Task, lice_runner: SandboxRunner,
                                               lice_stub: dict[str, str], stub_score: int) -> None:
    candidate = dict(lice_stub)
    for rel, source in ATTACKS[attack].items():
        candidate[rel] = source + ("\n" + candidate[rel] if rel in candidate else "")
    scored = lice_runner.score(lice, candidate, "unit")
    assert scored.score.passed <= stub_score, (attack, scored.report.tampered, scored.report.output_tail[-2000:])
    if attack in SAID:  # the attack ran, and the report says what it did
        assert SAID[attack] in (scored.report.tampered or scored.report.output_tail), scored.report.output_tail[-2000:]


def test_the_reference_still_scores_in_full(lice: Task, lice_runner: SandboxRunner) -> None:
    """The sandbox that stops the attacks still gives the honest candidate every test."""
    scored = lice_runner.score(lice, lice.reference_files(), "unit")
    assert (scored.score.passed, scored.score.expected, scored.report.tampered) == (25, 25, None)


# -- tasks whose own tests try it ------------------------------------------------------------
HIDDEN_MARKER = "hidden-unit-test-7c1f"

STASH = '''
import ctypes, glob, os
KEY = 0x7c1f
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p

def stash(text):
    data = text.encode()
    segment = libc.shmget(KEY, 1 << 20, 0o1000 | 0o666)
    if segment >= 0:
        address = libc.shmat(segment, None, 0)
        ctypes.memmove(address, data + b"\\0", len(data) + 1)
    for folder in ("/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~")):
        try:
            with open(os.path.join(folder, "stash.txt"), "w") as f:
                f.write(text)
        except OSError:
            pass

def recall():
    found = []
    segment = libc.shmget(KEY, 0, 0)
    if segment >= 0:
        address = libc.shmat(segment, None, 0o10000)  # SHM_RDONLY
        found.append(ctypes.string_at(address).decode(errors="replace"))
    for folder in ("/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~")):
        try:
            found.append(open(os.path.join(folder, "stash.txt")).read())
        except OSError:
            pass
    for folder, dirs, files in os.walk("/"):
        if folder == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
        if os.path.basename(folder) == "unit_tests":
            for name in files:
                try:
                    found.append(open(os.path.join(folder, name)).read())
                except OSError:
                    pass
    return "\\n".join(found)
'''


def two_suite_task(root: Path) -> Task:
    """A task with a visible check suite and a hidden unit suite that holds HIDDEN_MARKER."""
    files = {
        "check_tests/test_check.py": """
            import stash
            def test_leak():
                assert False, stash.recall()
        """,
        "unit_tests/test_unit.py": f"""
            import glob, stash
            SECRET = "{HIDDEN_MARKER}"
            def test_stash():
                stash.stash(open(__file__).read())
        """,
    }
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
    return Task(id=root.name, root=root, format="taskdir", docs=Documents(prd="demo"),
                suites={"check": TestSuite(name="check", paths=("check_tests",)),
                        "unit": TestSuite(name="unit", paths=("unit_tests",))}, env=EnvSpec())


def test_a_hidden_suite_never_reaches_a_later_check_runs_feedback(tmp_path: Path) -> None:
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path / "env-cache", workdir=tmp_path / "ws", timeout=60))
    if runner.isolation() != "namespaces":
        pytest.skip("the namespace sandbox is not available here")
    task = two_suite_task(tmp_path / "two")
    candidate = {"stash.py": STASH}
    unit = runner.evaluate(task, candidate, "unit")
    assert {t.nodeid.split("::")[-1]: t.outcome for t in unit.tests} == {"test_stash": Outcome.PASSED}
    check = runner.evaluate(task, candidate, "check")
    assert [t.outcome for t in check.tests] == [Outcome.FAILED]
    assert HIDDEN_MARKER not in check.tests[0].message and HIDDEN_MARKER not in check.output_tail
    assert "0x7c1f" not in Path("/proc/sysvipc/shm").read_text()  # no segment left on the host


def test_host_sockets_run_folders_and_datasets_are_not_there(tmp_path: Path) -> None:
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path / "env-cache", timeout=60))
    if runner.isolation() != "namespaces":
        pytest.skip("the namespace sandbox is not available here")
    project = Path(__file__).resolve().parents[2]
    task_root = tmp_path / "reach"
    (task_root / "unit_tests").mkdir(parents=True)
    (task_root / "unit_tests" / "test_reach.py").write_text(textwrap.dedent(f"""
        import glob, os, socket
        def test_no_run_folders():
            assert not os.path.exists("/run") and not os.path.exists("/var/run")
        def test_no_unix_sockets_to_connect_to():
            found = []
            for folder, dirs, files in os.walk("/"):
                if folder == "/":
                    dirs[:] = [d for d in dirs if d not in ("proc", "dev", "usr", "etc", "sys")]
                for name in files:
                    try:
                        if os.stat(os.path.join(folder, name)).st_mode & 0o170000 == 0o140000:
                            found.append(os.path.join(folder, name))
                    except OSError:
                        pass
            assert found == []
        def test_no_checkout_no_datasets_no_task_folder():
            for path in ({str(project / 'README.md')!r}, {str(project.parent / 'shared')!r},
                         {str(task_root / 'unit_tests')!r}, "/root/.bashrc", "/root/.ssh"):
                assert not os.path.exists(path), path
    """), encoding="utf-8")
    task = Task(id="reach", root=task_root, format="taskdir", docs=Documents(prd="demo"),
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))}, env=EnvSpec())
    report = runner.evaluate(task, {"calc.py": "x = 1\n"}, "unit")
    assert {t.nodeid.split("::")[-1]: t.outcome for t in report.tests} == dict.fromkeys(
        ["test_no_run_folders", "test_no_unix_sockets_to_connect_to", "test_no_checkout_no_datasets_no_task_folder"],
        Outcome.PASSED), report.output_tail


SELF_FORGING_TESTS = {
    "reports patched while the tests run": PATCH_REPORTS,
    "the run protocol's code swapped while the tests run": PATCH_CODE,
    "results forged at exit": FORGE + "import atexit\natexit.register(_forge)\n",
}


@pytest.mark.parametrize("attack", list(SELF_FORGING_TESTS))
def test_a_suite_whose_own_tests_forge_results_counts_no_pass(attack: str, tmp_path: Path) -> None:
    """The task's own first test attacks; the failing tests after it must not turn into passes."""
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path / "env-cache", timeout=60))
    root = tmp_path / "self-forging"
    (root / "unit_tests").mkdir(parents=True)
    attack_code = textwrap.indent(SELF_FORGING_TESTS[attack], "    ")
    (root / "unit_tests" / "test_forging.py").write_text(
        f"def test_attack():\n{attack_code}\n\ndef test_wrong():\n    assert 1 == 2\n\n"
        "def test_also_wrong():\n    raise ValueError('no')\n", encoding="utf-8")
    task = Task(id="forging", root=root, format="taskdir", docs=Documents(prd="demo"),
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))}, env=EnvSpec())
    report = runner.evaluate(task, {"calc.py": "x = 1\n"}, "unit")
    assert report.passed == 0 and report.tampered, (report.tampered, report.output_tail[-1500:])
    assert {t.nodeid.split("::")[-1] for t in report.tests} >= {"test_wrong", "test_also_wrong"}


def test_fifos_links_and_floods_left_for_the_runner_never_block_or_crash_it(tmp_path: Path) -> None:
    """The results once were a workspace file the runner read: a FIFO there blocked it forever and a link to
    /dev/zero read until MemoryError. Nothing the tests leave is read now; the run ends with its counts."""
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path / "env-cache", workdir=tmp_path / "ws", timeout=60))
    root = tmp_path / "traps"
    (root / "unit_tests").mkdir(parents=True)
    (root / "unit_tests" / "test_traps.py").write_text(textwrap.dedent('''
        import os
        def test_lay_traps():
            for folder in (os.getcwd(), os.path.join(os.getcwd(), ".projectgen"), os.environ["HOME"],
                           os.environ["TMPDIR"], "/tmp"):
                os.makedirs(folder, exist_ok=True)
                for name in ("results.jsonl", "report.json", "steps.json"):
                    path = os.path.join(folder, name)
                    if not os.path.lexists(path):
                        os.mkfifo(path)
                os.symlink("/dev/zero", os.path.join(folder, "zero.jsonl"))
        def test_after():
            assert False
    '''), encoding="utf-8")
    task = Task(id="traps", root=root, format="taskdir", docs=Documents(prd="demo"),
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))}, env=EnvSpec())
    report = runner.evaluate(task, {"calc.py": "x = 1\n"}, "unit")
    assert {t.nodeid.split("::")[-1]: t.outcome for t in report.tests} == {
        "test_lay_traps": Outcome.PASSED, "test_after": Outcome.FAILED}
    assert not report.timed_out and report.tampered is None
    assert list((tmp_path / "ws").iterdir()) == []  # the session folder is gone


# -- twins: copies of real tests with a wrong expected value ----------------------------------------------------
TWIN_ATTACKS = {
    "values equal to anything": {"lice/core.py": lambda reference: ALWAYS_EQUAL + returning(
        reference, ast.Call(func=ast.Name("_Anything", ast.Load()), args=[], keywords=[]))},
    "the importing test module's tests hollowed out": {"lice/__init__.py": lambda reference: HOLLOW_TESTS + returning(
        reference)},
    "a pluggy hookwrapper registered through gc": {"lice/__init__.py": lambda reference: GC_HOOKWRAPPER + returning(
        reference)},
    "a signed stream of passes that leaves other modules out": {
        "lice/__init__.py": lambda reference: FORGE_SIGNED + returning(reference)},
}


@pytest.fixture(scope="module")
def twins_runner(env_cache: Path) -> SandboxRunner:
    """Plants every verified twin (lice has about a dozen): which twins a run of 3 gets is random, so a test
    of what a twin catches plants them all."""
    return namespaced_runner(RunnerSettings(cache_dir=env_cache, timeout=120, twins=100))


@pytest.fixture(scope="module")
def lice_none(lice: Task) -> dict[str, str]:
    return {rel: returning(path.read_text(encoding="utf-8")) for rel, path in lice.reference_files().items()}


@pytest.mark.parametrize("attack", list(TWIN_ATTACKS))
def test_turning_failures_into_passes_scores_no_more_than_the_stub(
        attack: str, lice: Task, twins_runner: SandboxRunner, lice_none: dict[str, str]) -> None:
    """Each of these reached 25/25 against the stub's 8 when the canaries were a module of their own."""
    stub_score = twins_runner.score(lice, lice_none, "unit").score.passed
    assert 0 < stub_score < 25
    candidate = dict(lice_none)
    for rel, attack_on in TWIN_ATTACKS[attack].items():
        candidate[rel] = attack_on(lice.reference_files()[rel].read_text(encoding="utf-8"))
    scored = twins_runner.score(lice, candidate, "unit")
    assert scored.score.passed <= stub_score, (attack, scored.report.output_tail[-2000:])
    if attack in ONLY_TWINS_SEE:  # others trip a wire first (a trace function, a plugin), which says so instead
        assert TWIN_REASON in scored.report.tampered, scored.report.tampered


# No tripwire sees these: plain objects, no hook, no tracer; only a planted test does. (The others trip a wire
# first; the signed stream was written against a recorder with an `emit` attribute, which the recorder of
# closures no longer has: it finds nothing to use, and the round-2 attacks above use the closures.)
ONLY_TWINS_SEE = ("values equal to anything",)


@pytest.mark.parametrize("name", ["lice", "readtime"])
def test_the_reference_scores_in_full_with_every_twin_planted(name: str, shared_datasets: Path,
                                                              twins_runner: SandboxRunner) -> None:
    task = load_task(shared_datasets / "DevBench" / name)
    scored = twins_runner.score(task, task.reference_files(), "unit")
    assert scored.expected.twins, "no twin survived the reference"
    assert (scored.score.passed, scored.report.tampered) == (scored.score.expected, None), scored.report.output_tail
