"""Starts pytest in the sandbox with its recorder in place before any code under test can run.

Run as `python -s pytest_bootstrap.py PYTEST-ARGS...` (or `python -I ...`) from a read-only folder outside
the workspace: `sys.path[0]` is that folder (put there by the bootstrap under `-I`), PYTHONPATH is not set for this process (the runner
passes the children's value as PROJECTGEN_CHILD_PYTHONPATH) and the user site is off, so no
file of the candidate's (`pytest.py`, `_pytest/`, `sitecustomize.py`, `usercustomize.py`,
`projectgen_results.py`, a `.pth` in its install prefix) is imported before pytest, the
recorder and the modules the recorder watches are. Only then do the workspace, the source
root and the install prefix go on the import path, and pytest runs with the recorder as a
plugin object. The results pipe, the secret pipe and the canary module are named by environment
variables that are removed before the tests start; the secret pipe is read and closed, the results pipe is
not inherited by processes the tests start. The secret lives in no frame or object once the recorder is made:
the recorder keeps an HMAC object made from it, and `main`'s frame, alive for the whole run, holds neither the
recorder nor the pipe's number. Standard library only (and pytest): it runs in the
task's environment, not ours.

Once pytest returns, the process ends without the interpreter's tear-down (`end`): every result
has reached the runner by then, and freeing the modules and objects of a test run one by one
took 35-40 ms for a 0.4 s suite, paid by every evaluation for nothing. The exit functions still
run (the tests' own `atexit` work, and a candidate's forgery there is still caught), and the
output is flushed first.
"""
import atexit
import glob
import os
import site
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
# What pytest reads from the environment when it configures: a candidate's .pth file must not add options or
# plugins (PYTEST_ADDOPTS="-p ...") or turn entry-point plugins back on
PYTEST_VARIABLES = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")


def main(args):
    """pytest's run with the recorder as a plugin. The recorder is made by `_recorder`, whose frame (with the
    secret, the pipe's number) is gone before any code under test runs: this frame holds neither."""
    sys.dont_write_bytecode = True
    if not sys.path or os.path.realpath(sys.path[0] or os.curdir) != HERE:
        sys.path.insert(0, HERE)  # `python -I` leaves the script's folder out of the path
    import pytest
    import projectgen_results

    del sys.path[0]  # this folder: nothing more is imported from it
    return pytest.main(args, plugins=[_recorder(projectgen_results)])


def _recorder(projectgen_results):
    """The recorder, made from the pipes the environment names, and the import path of the tests set. Keeps
    an HMAC object made from the secret, not the secret; its audit hook goes first, before any other."""
    import hashlib
    import hmac

    env = os.environ
    results_fd = int(env.pop("PROJECTGEN_RESULTS_FD"))
    secret_fd = int(env.pop("PROJECTGEN_SECRET_FD"))
    canary = env.pop("PROJECTGEN_CANARY", "")
    imports = [path for path in env.pop("PROJECTGEN_IMPORT_PATHS", "").split(os.pathsep) if path]
    child_path = env.pop("PROJECTGEN_CHILD_PYTHONPATH", "")
    sources = [path for path in env.pop("PROJECTGEN_COVERAGE_SOURCES", "").split(os.pathsep) if path]
    coverage = _coverage(sources) if sources else None
    plugin = projectgen_results.recorder(results_fd, hmac.new(_read_all(secret_fd), digestmod=hashlib.sha256),
                                         canary, coverage)
    sys.addaudithook(plugin.audit)
    if coverage is not None and not isinstance(coverage, str):
        coverage.start()  # from the environment's coverage.py: tracing the recorder trusts
    os.set_inheritable(results_fd, False)
    del results_fd, secret_fd
    sys.path[0:0] = imports  # from here on a candidate's .pth file may run: this frame holds no secret
    prefix = env.get("PROJECTGEN_INSTALL_PREFIX")
    if prefix:  # the install step's prefix, with its .pth files (editable installs are .pth files)
        settings = {name: env.get(name) for name in PYTEST_VARIABLES}
        for folder in sorted(glob.glob(os.path.join(prefix, "lib*", "python*", "site-packages"))):
            site.addsitedir(folder)
        for name, value in settings.items():  # a .pth line runs code: what pytest reads is ours again
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
    if child_path:
        env["PYTHONPATH"] = child_path
    return plugin


def _coverage(sources):
    """A `coverage.Coverage` of line coverage over `sources` (folders, or module names), not started: no data
    file, no configuration file of the workspace's (the same figure for every run); or why there is none (the
    task's environment has no coverage.py)."""
    try:
        import coverage
    except ImportError:
        return "coverage.py is not installed in the task's environment"
    return coverage.Coverage(source=sources, data_file=None, config_file=False)


def _read_all(fd):
    """What the pipe `fd` holds until its writer closed it; the pipe is closed."""
    data = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return data


def end(status):
    """Exit with `status` after the exit functions and a flush of the output, skipping the interpreter's
    tear-down. Threads the tests left running are not waited for: the launcher kills them with the step."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass  # a stream the tests closed or replaced: what it held is theirs
    os._exit(int(status))


if __name__ == "__main__":
    end(main(sys.argv[1:]))
