"""pytest plugin run inside the sandbox: one signed JSON line per event, written at once to a pipe.

The recorder is made by `pytest_bootstrap` before any code under test is imported, and
it writes to a pipe whose other end is the runner's: nothing written can be rewritten
later, and nothing is left in the workspace to replace. Each line is a JSON event with
a sequence number, then a tab and an HMAC of it under a secret the runner handed over
through another pipe that was closed once read: a line the code under test writes to
the pipe itself does not carry a valid signature, and the runner counts the run as
tampered with.

Nothing in the recorder steers it from outside: `recorder()` returns an object without
attributes of its own (no `__dict__`, its class's members are functions), whose hooks are
closures over the pipe, a counter and an HMAC object made from the secret (the secret's bytes
are not kept). No flag silences a check: every check looks again, and says each problem once.

Tripwires (they say the run was tampered with; the canaries and the runner's rules are the
defence): the functions of pytest, pluggy and unittest (and the recorder's own) noted at the
start and compared at every check; the plugin manager's plugins and each hook's implementations
noted after configure and compared at every check (a plugin the tests' conftest files or the
test environment add is accepted); trace and profile functions, `sys.monitoring` callbacks and
audit hooks installed by code from outside the test environment (`audit`, installed by the
bootstrap as the first audit hook). Code from the test environment's site-packages, pytest's own
and the standard library may do all of these (coverage, pytest-django, faulthandler, pdb).

Code in the same process can still read the closures, patch more than this checks or fake a
code object's file name; docs/sandbox.md says what remains. Each line goes straight to the file
descriptor (no Python buffering), so the results recorded before a crash, an `os._exit` or a
SIGKILL reach the runner. A passed setup writes nothing (a test's "start" line already says it
began; its seconds are added to the test's next report). Standard library only: it runs in the
task's environment, not ours.
"""
import importlib
import json
import os
import sys
import time
import types

import _pytest.config
import pytest

WATCHED_MODULES = (
    "_pytest.runner", "_pytest.reports", "_pytest.python", "_pytest.python_api", "_pytest.raises",
    "_pytest.main", "_pytest.nodes", "_pytest.outcomes", "_pytest.skipping", "_pytest.unittest",
    "_pytest.fixtures", "_pytest.assertion", "_pytest.assertion.rewrite", "_pytest.assertion.util",
    "_pytest.config", "_pytest.terminal", "pluggy._callers", "pluggy._hooks", "pluggy._manager",
    "pluggy._result", "pluggy._caller", "pluggy._execution", "pluggy._impl", "unittest.case", "unittest.result",
    "projectgen_results",
)
CHECK_EVERY = 0.1  # seconds between integrity checks while tests report; always after collection and at the end
# Audit events that install something which sees or steers every frame: tracing, profiling, sys.monitoring
# (3.12+), another audit hook.
TRACING_EVENTS = frozenset({
    "sys.settrace", "sys.setprofile", "sys._settraceallthreads", "sys._setprofileallthreads",
    "sys.addaudithook", "sys.monitoring.register_callback",
})


# The end of a test's message sent; the runner shows the last 4,000 characters once it has made the paths and
# addresses in it the same for every run (`stable_output`): cut here, where the cut falls would move with them.
MESSAGE_CHARS = 16000


def skip_final_collections(config):
    """pytest >= 8.4 runs full garbage collections at its end (one in its unconfigure, one in a clean-up) to turn
    late unraisable exceptions into warnings: 40-100 ms on a suite of a few hundred tests, and nothing a test's
    result can depend on (every result is recorded by then, and the terminal is silenced). Its own knob, the one
    pytester uses, sets them to none."""
    key = getattr(sys.modules.get("_pytest.unraisableexception"), "gc_collect_iterations_key", None)
    stash = getattr(config, "stash", None)  # pytest < 7 has none
    if key is not None and stash is not None:
        stash[key] = 0


def _tail(text, limit=MESSAGE_CHARS):
    text = text or ""
    return text if len(text) <= limit else "..." + text[-limit:]


def _function_of(value):
    """The plain function behind a module attribute or a class member, or None."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        value = value.fget
    return value if hasattr(value, "__code__") else None


def watched_functions(module_names=WATCHED_MODULES):
    """(namespace, where, name, value, function, code) for every function of the watched modules and their
    classes; the namespace is the module's or class's own dict (a live view), so a check is a lookup, not a
    getattr; `where` names it in a report."""
    found = []
    for module_name in module_names:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue  # not in this pytest version
        namespace = vars(module)
        for name, value in list(namespace.items()):
            function = _function_of(value)
            if function is not None:
                found.append((namespace, module_name, name, value, function, function.__code__))
            elif isinstance(value, type) and value.__module__ == module_name:
                members = vars(value)
                for member, inner in list(members.items()):
                    function = _function_of(inner)
                    if function is not None:
                        found.append((members, value.__qualname__, member, inner, function, function.__code__))
    return found


def framework_folders():
    """Where pytest's and pluggy's own code lives: changes made from there at configure time are theirs."""
    folders = []
    for name in ("_pytest", "pluggy"):
        module = importlib.import_module(name)
        folders.append(os.path.dirname(os.path.realpath(module.__file__)) + os.sep)
    return tuple(folders)


def environment_folders():
    """The test environment's site-packages (read-only in the sandbox, built from the task's requirements):
    its plugins patch the framework while tests run (pytest-django swaps `TestCaseFunction.runtest` around
    each unittest test). The candidate's install prefix is added to the path later and is not among them."""
    import site

    return tuple(os.path.realpath(folder) + os.sep for folder in site.getsitepackages())


def standard_folders():
    """The standard library's folder and the sandbox's own (the bootstrap): code there installs tracing for
    others (`threading` starts a thread with the trace function `threading.settrace` was given), so a tracing
    call made from there is judged by the code that asked for it."""
    return (os.path.dirname(os.path.realpath(os.__file__)) + os.sep,
            os.path.dirname(os.path.realpath(__file__)) + os.sep)


def defined_in(function, folders):
    return os.path.realpath(function.__code__.co_filename).startswith(folders)


def _is_conftest(plugin):
    """A conftest module pytest registered as a plugin: the suite's own (a candidate's conftest files are
    dropped from the workspace)."""
    return isinstance(plugin, types.ModuleType) and os.path.basename(getattr(plugin, "__file__", None) or "") == "conftest.py"


def _threading_hook(name):
    """A trace or profile function `threading.settrace`/`setprofile` holds for the threads started next."""
    threading = sys.modules.get("threading")
    return getattr(threading, name, None) if threading is not None else None


def _code_of_callable(value):
    """The function a trace function or hook implementation runs: itself, a method's function, a callable
    object's `__call__`, or None (code in C: judged by its module, `_module_file`)."""
    value = getattr(value, "__func__", value)
    if hasattr(value, "__code__"):
        return value
    return _function_of(getattr(type(value), "__call__", None))


def _module_file(value):
    module = sys.modules.get(getattr(type(value), "__module__", ""))
    return getattr(module, "__file__", None) or ""


def _impl_key(impl):
    """A hook implementation as its plugin and plain function: the same after the plugin is registered again."""
    return id(impl.plugin), getattr(impl.function, "__func__", impl.function)


def hook_implementations(manager):
    """{hook name: (caller, ((implementation, function, code), ...))} of a plugin manager, in calling order."""
    found = {}
    for name, caller in list(vars(manager.hook).items()):
        get = getattr(caller, "get_hookimpls", None)
        if get is None:
            continue
        found[name] = (caller, tuple((impl, impl.function, getattr(impl.function, "__code__", None))
                                     for impl in get()))
    return found


def recorder(fd, mac, canary, coverage=None):
    """The pytest plugin object: events on `fd`, signed with a copy of `mac` (an HMAC object made from the
    secret), the canary module (`canary`, a file name) run without being shown. `coverage`: a started
    `coverage.Coverage` whose total line coverage is sent before the finish event (a string: why there is
    none), when the runner asked for it. Everything it uses is captured here; the object has no attribute to
    set and its hooks look nothing up on it."""
    write, monotonic, dumps, getframe = os.write, time.monotonic, json.dumps, sys._getframe
    realpath, basename = os.path.realpath, os.path.basename
    sequence = [0]
    setup_seconds = {}
    watched = [watched_functions()]
    trusted = environment_folders()
    framework = framework_folders()
    standard = standard_folders()
    last_check = [monotonic()]
    said = set()
    suite_items = [None]
    hooks = [None]  # the plugin manager's hooks as noted after configure (and accepted since)
    finished = [False]

    def emit(**event):
        sequence[0] += 1
        event["seq"] = sequence[0]
        payload = dumps(event).encode("utf-8", "replace")
        signature = mac.copy()
        signature.update(payload)
        write(fd, payload + b"\t" + signature.hexdigest()[:32].encode() + b"\n")

    def tampered(what):
        """Say `what` once; never raises (an audit hook's caller must not see our failure)."""
        if what in said:
            return
        said.add(what)
        try:
            emit(event="tampered", what=what)
        except Exception:
            pass

    def is_trusted(value):
        """Whether a trace function or hook implementation is the environment's, pytest's or the standard
        library's code."""
        try:
            function = _code_of_callable(value)
            if function is not None:
                return defined_in(function, trusted + framework + standard)
            return realpath(_module_file(value)).startswith(trusted + framework + standard)
        except Exception:
            return False

    def framework_problem():
        for namespace, where, name, value, function, code in watched[0]:
            current = namespace.get(name)
            if current is value and function.__code__ is code:
                continue
            if current is value:  # plugins replace a function; none swaps its code (whatever file it names)
                return "%s.%s had its code swapped while the tests ran" % (where, name)
            function = _function_of(current)
            if function is not None and defined_in(function, trusted):
                continue  # a plugin of the test environment's, for as long as it keeps its change
            return "%s.%s was changed while the tests ran" % (where, name)
        return None

    def hooks_problem(force):
        """A hook implementation added or changed from outside the environment, at once; one removed, when it
        is still missing at a forced check (flask's suite unregisters pytest's logging plugin for a test and
        registers it again)."""
        noted = hooks[0]
        if noted is None:
            return None
        for name, caller, impls in hooks_now():
            before = noted.get(name)
            if before is not None and before[0] is caller and len(before[1]) == len(impls) and all(
                    a[0] is b[0] and a[1] is b[1] and a[2] is b[2] for a, b in zip(before[1], impls)):
                continue
            if before is not None and before[0] is not caller:
                return "the pytest hook %s was replaced while the tests ran" % name
            known = {id(impl): (function, code) for impl, function, code in before[1]} if before else {}
            for impl, function, code in impls:
                was = known.get(id(impl))
                if was is not None and was[0] is function and was[1] is code:
                    continue
                if is_trusted(function) or _is_conftest(impl.plugin):
                    continue  # a conftest module of the suite, a plugin of the environment, pytest's own
                return "a pytest plugin was added or changed while the tests ran: %s of %r" % (name, impl.plugin_name)
            present = {_impl_key(impl) for impl, _, _ in impls}
            missing = [impl for impl, _, _ in before[1] if _impl_key(impl) not in present] if before else []
            if missing and force:
                return "a pytest hook implementation was removed while the tests ran: %s of %r" % (
                    name, missing[0].plugin_name)
            if not missing:
                noted[name] = (caller, impls)  # what changed is trusted: compared with that from now on

    def hooks_now():
        return [(name, caller, impls) for name, (caller, impls) in hook_implementations(manager[0]).items()]

    def tracing_problem():
        for what, function in (("trace function", sys.gettrace()), ("profile function", sys.getprofile()),
                               ("thread trace function", _threading_hook("_trace_hook")),
                               ("thread profile function", _threading_hook("_profile_hook"))):
            if function is not None and not is_trusted(function):
                return "a %s was installed by code under test" % what
        return None

    def check(force=False):
        """Look for a patched framework, a changed plugin or hook, a tracer from outside the environment (at
        most every CHECK_EVERY seconds unless `force`)."""
        now = monotonic()
        if not force and now - last_check[0] < CHECK_EVERY:
            return
        last_check[0] = now
        for problem in (framework_problem(), hooks_problem(force), tracing_problem(), own_code_problem()):
            if problem:
                tampered(problem)

    def audit(event, args):
        """The first audit hook of the test process: says when code from outside the test environment installs
        a trace or profile function, a sys.monitoring callback or another audit hook."""
        if event not in TRACING_EVENTS:
            return
        try:
            frame = getframe(1)
            while frame is not None:
                where = realpath(frame.f_code.co_filename)
                if where.startswith(standard):
                    frame = frame.f_back
                    continue
                if not where.startswith(trusted + framework):
                    tampered("%s was called by code under test (%s)" % (event, basename(where)))
                return
            problem = tracing_problem()  # only the standard library asked: for what it was given
            if problem:
                tampered(problem)
        except Exception:
            pass

    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        """pytest patches itself while it configures (its legacypath plugin, for one): what changed since the
        recorder started is accepted when the new function's code is pytest's or pluggy's own. The plugins
        and hooks are noted from here on."""
        accepted = []
        for namespace, where, name, value, function, code in watched[0]:
            current = namespace.get(name)
            now = _function_of(current)
            if current is not value and now is not None and defined_in(now, framework):
                accepted.append((namespace, where, name, current, now, now.__code__))
            else:
                accepted.append((namespace, where, name, value, function, code))
        watched[0] = accepted
        manager[0] = config.pluginmanager
        hooks[0] = {name: (caller, impls) for name, caller, impls in hooks_now()}
        skip_final_collections(config)
        check(force=True)

    def pytest_collectreport(report):
        if report.failed:
            emit(event="collect_error", nodeid=report.nodeid, message=_tail(report.longreprtext))

    def pytest_collection_finish(session):
        # after every modifyitems hook: tests deselected (`-m` in a benchmark's addopts) are not collected ones
        items = session.items
        emit(event="collected", count=len(items), nodeids=[item.nodeid for item in items])
        suite_items[0] = sum(1 for item in items if not is_canary(item))
        check(force=True)

    def is_canary(item):
        return basename(str(getattr(item, "path", None) or item.fspath)) == canary

    def pytest_runtest_logstart(nodeid, location):
        emit(event="start", nodeid=nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(item, nextitem):
        """A canary runs through pytest's run protocol like any test, but its reports go to the recorder
        alone: the terminal (and so the output a model is shown) never mentions it."""
        if not is_canary(item):
            return None
        from _pytest.runner import runtestprotocol

        emit(event="start", nodeid=item.nodeid)
        for report in runtestprotocol(item, nextitem=nextitem, log=False):
            pytest_runtest_logreport(report)
        return True

    def pytest_runtest_logreport(report):
        # pytest times a phase with the clock the test runs under: one set back (freezegun) makes it negative
        duration = max(getattr(report, "duration", 0.0), 0.0)
        if report.when == "setup" and report.outcome == "passed":
            setup_seconds[report.nodeid] = duration
            return
        duration += setup_seconds.pop(report.nodeid, 0.0)
        check()
        event = dict(
            event="report",
            nodeid=report.nodeid,
            when=report.when,
            outcome=report.outcome,
            duration=duration,
            wasxfail=hasattr(report, "wasxfail"),
            message=_tail(report.longreprtext) if report.outcome != "passed" else "",
        )
        if type(report).__name__.lower() == "subtestreport":  # pytest's subtests, unittest's subTest
            event["subtest"] = True
        emit(**event)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session, exitstatus):
        if finished[0]:
            return
        finished[0] = True
        if suite_items[0] == 0 and exitstatus == 0:
            session.exitstatus = exitstatus = 5  # only canaries ran: the suite itself has no tests
        check(force=True)
        if isinstance(coverage, str):
            emit(event="coverage", problem=coverage)
        elif coverage is not None:
            try:
                coverage.stop()
                with open(os.devnull, "w") as nowhere:
                    emit(event="coverage", percent=float(coverage.report(file=nowhere)))
            except Exception as exc:  # coverage.py's NoDataError (no source file found), and any other
                emit(event="coverage", problem="coverage.py could not report: %s" % (str(exc)[:300],))
        emit(event="finish", exitstatus=int(exitstatus))

    # -- the output a model is shown -----------------------------------------------------------------------
    # pytest's terminal names every test it runs, the runner's planted ones too: it writes nowhere, and the
    # runner builds what a model is shown from these events. What else the run prints (the tests' own output
    # outside capture, pytest's usage and conftest errors on stderr) still reaches the runner.
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(session):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter._tw = _pytest.config.create_terminal_writer(session.config, open(os.devnull, "w"))

    def pytest_internalerror(excrepr, excinfo):
        """The silenced terminal would swallow pytest's internal errors: they go to stderr."""
        for line in str(excrepr).split("\n"):
            sys.stderr.write("INTERNALERROR> %s\n" % line)

    manager = [None]
    own = (emit, tampered, is_trusted, framework_problem, hooks_problem, hooks_now, tracing_problem, check, audit,
           pytest_configure, pytest_collectreport, pytest_collection_finish, is_canary, pytest_runtest_logstart,
           pytest_runtest_protocol, pytest_runtest_logreport, pytest_sessionfinish, pytest_sessionstart,
           pytest_internalerror)
    own_code = tuple((function, function.__code__) for function in own)

    def own_code_problem():
        for function, code in own_code:
            if function.__code__ is not code:
                return "the test recorder's %s had its code swapped" % function.__name__
        return None

    class Recorder:
        """The plugin object pytest registers: its hooks, `check` and `audit` (the closures themselves, which
        pluggy holds from registration on), and no attribute of its own."""

        __slots__ = ()

    for function in own:
        if function.__name__.startswith("pytest_") or function.__name__ in ("check", "audit"):
            setattr(Recorder, function.__name__, staticmethod(function))
    return Recorder()
