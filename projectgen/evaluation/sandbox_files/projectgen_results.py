"""pytest plugin run inside the sandbox: one signed JSON line per event, written at once to a pipe.

The recorder is made by `pytest_bootstrap` before any code under test is imported, and
it writes to a pipe whose other end is the runner's: nothing written can be rewritten
later, and nothing is left in the workspace to replace. Each line is a JSON event with
a sequence number, then a tab and an HMAC of it under a secret the runner handed over
through another pipe that was closed once read: a line the code under test writes to
the pipe itself does not carry a valid signature, and the runner counts the run as
tampered with. The recorder also notes which functions of pytest, pluggy and unittest
(and its own) exist when it starts, and says so if any of them is later replaced or
has its code swapped by code from outside the test environment (its plugins, such as
pytest-django, patch the framework too): code under test that patches the test
framework at import.

Code in the same process can still read the secret from memory or patch more than
this checks; docs/sandbox.md says what remains. Each line goes straight to the file
descriptor (no Python buffering), so the results recorded before a crash, an
`os._exit` or a SIGKILL reach the runner. A passed setup writes nothing (a test's
"start" line already says it began; its seconds are added to the test's next
report). Standard library only: it runs in the task's environment, not ours.
"""
import hashlib
import hmac
import importlib
import json
import os
import sys
import time

import _pytest.config
import pytest

WATCHED_MODULES = (
    "_pytest.runner", "_pytest.reports", "_pytest.python", "_pytest.python_api", "_pytest.raises",
    "_pytest.main", "_pytest.nodes", "_pytest.outcomes", "_pytest.skipping", "_pytest.unittest",
    "_pytest.fixtures", "_pytest.assertion", "_pytest.assertion.rewrite", "_pytest.assertion.util",
    "_pytest.config", "_pytest.terminal", "pluggy._callers", "pluggy._hooks", "pluggy._manager",
    "pluggy._result", "unittest.case", "unittest.result", "projectgen_results",
)
CHECK_EVERY = 0.1  # seconds between integrity checks while tests report; always after collection and at the end


def _tail(text, limit=4000):
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


def defined_in(function, folders):
    return os.path.realpath(function.__code__.co_filename).startswith(folders)


class Recorder:
    """Records pytest's events on `fd`, signed with `secret`, watches the test framework for patches, and runs
    the canary module's tests (`canary`, a file name) without showing them: they must fail."""

    def __init__(self, fd, secret, canary):
        self.fd = fd
        self.key = secret
        self.canary = canary
        self.sequence = 0
        self.setup_seconds = {}
        self.watched = watched_functions()
        self.trusted = environment_folders()
        self.last_check = time.monotonic()
        self.tampered = False
        self.suite_items = None

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config):
        """pytest patches itself while it configures (its legacypath plugin, for one): what changed since the
        recorder started is accepted when the new function's code is pytest's or pluggy's own."""
        framework = framework_folders()
        accepted = []
        for namespace, where, name, value, function, code in self.watched:
            current = namespace.get(name)
            now = _function_of(current)
            if current is not value and now is not None and defined_in(now, framework):
                accepted.append((namespace, where, name, current, now, now.__code__))
            else:
                accepted.append((namespace, where, name, value, function, code))
        self.watched = accepted
        self.check(force=True)

    def emit(self, **event):
        self.sequence += 1
        event["seq"] = self.sequence
        payload = json.dumps(event).encode("utf-8", "replace")
        signature = hmac.new(self.key, payload, hashlib.sha256).hexdigest()[:32].encode()
        os.write(self.fd, payload + b"\t" + signature + b"\n")

    def check(self, force=False):
        """Say once if a watched function was replaced or had its code swapped since the start."""
        now = time.monotonic()
        if self.tampered or (not force and now - self.last_check < CHECK_EVERY):
            return
        self.last_check = now
        for namespace, where, name, value, function, code in self.watched:
            current = namespace.get(name)
            if current is value and function.__code__ is code:
                continue
            function = _function_of(current)
            if function is not None and defined_in(function, self.trusted):
                continue  # a plugin of the test environment's, for as long as it keeps its change
            self.tampered = True
            self.emit(event="tampered", what="%s.%s was changed while the tests ran" % (where, name))
            return

    def pytest_collectreport(self, report):
        if report.failed:
            self.emit(event="collect_error", nodeid=report.nodeid, message=_tail(report.longreprtext))

    def pytest_collection_finish(self, session):
        # after every modifyitems hook: tests deselected (`-m` in a benchmark's addopts) are not collected ones
        items = session.items
        self.emit(event="collected", count=len(items), nodeids=[item.nodeid for item in items])
        self.suite_items = sum(1 for item in items if not self.is_canary(item))
        self.check(force=True)

    def is_canary(self, item):
        return os.path.basename(str(getattr(item, "path", None) or item.fspath)) == self.canary

    def pytest_runtest_logstart(self, nodeid, location):
        self.emit(event="start", nodeid=nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """A canary runs through pytest's run protocol like any test, but its reports go to the recorder
        alone: the terminal (and so the output a model is shown) never mentions it."""
        if not self.is_canary(item):
            return None
        from _pytest.runner import runtestprotocol

        self.emit(event="start", nodeid=item.nodeid)
        for report in runtestprotocol(item, nextitem=nextitem, log=False):
            self.pytest_runtest_logreport(report)
        return True

    def pytest_runtest_logreport(self, report):
        duration = getattr(report, "duration", 0.0)
        if report.when == "setup" and report.outcome == "passed":
            self.setup_seconds[report.nodeid] = duration
            return
        duration += self.setup_seconds.pop(report.nodeid, 0.0)
        self.check()
        self.emit(
            event="report",
            nodeid=report.nodeid,
            when=report.when,
            outcome=report.outcome,
            duration=duration,
            wasxfail=hasattr(report, "wasxfail"),
            message=_tail(report.longreprtext) if report.outcome != "passed" else "",
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.suite_items == 0 and exitstatus == 0:
            session.exitstatus = exitstatus = 5  # only canaries ran: the suite itself has no tests
        self.check(force=True)
        self.emit(event="finish", exitstatus=int(exitstatus))

    # -- the output a model is shown -----------------------------------------------------------------------
    # pytest's terminal names every test it runs, the runner's planted ones too: it writes nowhere, and the
    # runner builds what a model is shown from these events. What else the run prints (the tests' own output
    # outside capture, pytest's usage and conftest errors on stderr) still reaches the runner.
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter._tw = _pytest.config.create_terminal_writer(session.config, open(os.devnull, "w"))

    def pytest_internalerror(self, excrepr, excinfo):
        """The silenced terminal would swallow pytest's internal errors: they go to stderr."""
        for line in str(excrepr).split("\n"):
            sys.stderr.write("INTERNALERROR> %s\n" % line)
