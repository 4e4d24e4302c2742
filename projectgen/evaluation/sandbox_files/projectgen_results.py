"""pytest plugin run inside the sandbox: one JSON line per event, written at once.

Each line goes straight to the file descriptor (no Python buffering), so the
results recorded before a crash, an `os._exit` or a SIGKILL are on disk. A passed
setup writes nothing (a test's "start" line already says it began; its seconds are
added to the test's next report), which saves a quarter of the writes.
Standard library only: it runs in the task's environment, not ours.
"""
import json
import os


def _tail(text, limit=4000):
    text = text or ""
    return text if len(text) <= limit else "..." + text[-limit:]


class _Recorder:
    def __init__(self, fd):
        self.fd = fd
        self.setup_seconds = {}  # a passed setup is told with the test's next report: one write less per test

    def emit(self, **event):
        os.write(self.fd, (json.dumps(event) + "\n").encode("utf-8", "replace"))

    def pytest_collectreport(self, report):
        if report.failed:
            self.emit(event="collect_error", nodeid=report.nodeid, message=_tail(report.longreprtext))

    def pytest_collection_modifyitems(self, session, config, items):
        self.emit(event="collected", count=len(items), nodeids=[item.nodeid for item in items])

    def pytest_runtest_logstart(self, nodeid, location):
        self.emit(event="start", nodeid=nodeid)

    def pytest_runtest_logreport(self, report):
        duration = getattr(report, "duration", 0.0)
        if report.when == "setup" and report.outcome == "passed":
            self.setup_seconds[report.nodeid] = duration
            return
        duration += self.setup_seconds.pop(report.nodeid, 0.0)
        self.emit(
            event="report",
            nodeid=report.nodeid,
            when=report.when,
            outcome=report.outcome,
            duration=duration,
            wasxfail=hasattr(report, "wasxfail"),
            message=_tail(report.longreprtext) if report.outcome != "passed" else "",
        )

    def pytest_sessionfinish(self, session, exitstatus):
        self.emit(event="finish", exitstatus=int(exitstatus))


def pytest_configure(config):
    path = os.environ.get("PROJECTGEN_RESULTS_FILE")
    if path and not config.pluginmanager.has_plugin("projectgen-recorder"):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        config.pluginmanager.register(_Recorder(fd), "projectgen-recorder")
