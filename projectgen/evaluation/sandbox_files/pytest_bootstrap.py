"""Starts pytest in the sandbox with its recorder in place before any code under test can run.

Run as `python -s pytest_bootstrap.py PYTEST-ARGS...` from a read-only folder outside the
workspace: `sys.path[0]` is that folder, PYTHONPATH is not set for this process (the runner
passes the children's value as PROJECTGEN_CHILD_PYTHONPATH) and the user site is off, so no
file of the candidate's (`pytest.py`, `_pytest/`, `sitecustomize.py`, `usercustomize.py`,
`projectgen_results.py`, a `.pth` in its install prefix) is imported before pytest, the
recorder and the modules the recorder watches are. Only then do the workspace, the source
root and the install prefix go on the import path, and pytest runs with the recorder as a
plugin object. The results pipe, the secret pipe and the canary module are named by environment
variables that are removed before the tests start; the secret pipe is read and closed, the results pipe is
not inherited by processes the tests start. Standard library only (and pytest): it runs in the
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


def main(args):
    env = os.environ
    results_fd = int(env.pop("PROJECTGEN_RESULTS_FD"))
    secret_fd = int(env.pop("PROJECTGEN_SECRET_FD"))
    canary = env.pop("PROJECTGEN_CANARY", "")
    imports = [path for path in env.pop("PROJECTGEN_IMPORT_PATHS", "").split(os.pathsep) if path]
    child_path = env.pop("PROJECTGEN_CHILD_PYTHONPATH", "")
    sys.dont_write_bytecode = True
    import pytest
    import projectgen_results

    secret = b""
    while True:
        chunk = os.read(secret_fd, 4096)
        if not chunk:
            break
        secret += chunk
    os.close(secret_fd)
    recorder = projectgen_results.Recorder(results_fd, secret, canary)
    os.set_inheritable(results_fd, False)
    del sys.path[0]  # this folder: nothing more is imported from it
    sys.path[0:0] = imports
    prefix = env.get("PROJECTGEN_INSTALL_PREFIX")
    if prefix:  # the install step's prefix, with its .pth files (editable installs are .pth files)
        for folder in sorted(glob.glob(os.path.join(prefix, "lib*", "python*", "site-packages"))):
            site.addsitedir(folder)
    if child_path:
        env["PYTHONPATH"] = child_path
    return pytest.main(args, plugins=[recorder])


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
