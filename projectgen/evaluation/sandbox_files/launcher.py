"""Starts the command under test: contained, limited, and unable to reach back.

Two stages, both in this file (standard library only; it runs with `python -I`):

outer  (host side) joins the run's cgroups, if the runner made any. With
       `--isolate` it then enters a new user namespace and execs `unshare` for
       the mount, network and PID namespaces, which runs the inner stage.
       As root it makes the user namespace itself: uid 0 inside stays host
       root (to set up mounts and read the test environment), and a second id
       inside, `--map-uid`, is a host uid nobody else uses. Without isolation
       it stays the command's parent, so the command's `getppid()` is this
       shim, not the runner.
inner  (`--inside`, root of the new namespaces) makes every mount read-only
       except the workspace, hides the home folders behind empty tmpfs mounts
       (re-exposing, read-only, the paths the test environment needs), makes
       /sys and /proc/sys read-only, brings up loopback in the empty network
       namespace, sets the process limit, and execs the command with every
       capability dropped and, as root, as the unprivileged mapped uid: the
       kernel exempts host root from RLIMIT_NPROC and lets it write root-owned
       files in /proc/sys and /sys, the mapped uid gets neither.
"""
import argparse
import ctypes
import encodings.unicode_escape  # noqa: F401  (imported before the interpreter's prefix may be hidden)
import os
import resource
import signal
import subprocess
import sys

CLONE_NEWUSER = 0x10000000
INNER_SANDBOX_ID = 1000  # the mapped uid/gid as seen inside the namespace


def tool(name):
    """A system program, also found in the sbin folders a test PATH leaves out (`ip`)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
    for folder in path.split(":"):
        candidate = os.path.join(folder, name)
        if folder and os.access(candidate, os.X_OK):
            return candidate
    return name


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def mount_points():
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1].encode().decode("unicode_escape") for line in mounts]
    return sorted(set(points), key=len)


def under(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--inside", action="store_true", help="inner stage (run by unshare)")
    parser.add_argument("--isolate", action="store_true", help="outer stage: go into namespaces")
    parser.add_argument("--cgroup-procs", action="append", default=[], help="cgroup.procs file to join first")
    parser.add_argument("--processes", type=int, default=0, help="RLIMIT_NPROC for the command (0: unset)")
    parser.add_argument("--map-uid", type=int, default=None, help="host uid (and gid) the command runs as")
    parser.add_argument("--drop-to", type=int, default=None, help="inner stage: uid/gid to become")
    parser.add_argument("--workspace")
    parser.add_argument("--hide", action="append", default=[], help="replace with an empty read-only tmpfs")
    parser.add_argument("--scratch", action="append", default=[], help="replace with an empty writable tmpfs")
    parser.add_argument("--keep", action="append", default=[], help="stay visible (read-only) inside hidden folders")
    parser.add_argument("--scratch-size", default="1g")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return args


# -- outer stage -------------------------------------------------------------------
def join_cgroups(procs_files):
    """Move this process (and so everything it starts) into the run's cgroups."""
    for path in procs_files:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))


def enter_user_namespace(host_uid, host_gid, sandbox_id):
    """unshare(CLONE_NEWUSER) with uid/gid 0 -> ours and INNER_SANDBOX_ID -> sandbox_id.

    Only a process outside the new namespace may write a map with two lines,
    so a forked helper writes ours once we have unshared.
    """
    me = os.getpid()
    ready_r, ready_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        os.close(ready_w)
        code = 1
        try:
            if os.read(ready_r, 1) == b"1":
                write_map(me, "uid", host_uid, sandbox_id)
                write_map(me, "gid", host_gid, sandbox_id)
                code = 0
        except OSError as exc:
            sys.stderr.write("projectgen sandbox: cannot map ids: %s\n" % exc)
        os._exit(code)
    os.close(ready_r)
    libc = ctypes.CDLL(None, use_errno=True)
    failed = libc.unshare(CLONE_NEWUSER) != 0
    errno = ctypes.get_errno()
    os.write(ready_w, b"0" if failed else b"1")
    os.close(ready_w)
    _, status = os.waitpid(helper, 0)
    if failed:
        raise OSError(errno, "unshare(CLONE_NEWUSER): " + os.strerror(errno))
    if status != 0:
        raise OSError("could not write the user namespace's id maps")


def write_map(pid, kind, host_id, sandbox_id):
    fd = os.open("/proc/%d/%s_map" % (pid, kind), os.O_WRONLY)
    try:
        os.write(fd, ("0 %d 1\n%d %d 1\n" % (host_id, INNER_SANDBOX_ID, sandbox_id)).encode())
    finally:
        os.close(fd)


def inner_argv(args):
    """This file's arguments for the inner stage."""
    argv = [sys.executable, "-I", os.path.abspath(__file__), "--inside", "--workspace", args.workspace,
            "--processes", str(args.processes), "--scratch-size", args.scratch_size]
    if args.map_uid is not None:
        argv += ["--drop-to", str(INNER_SANDBOX_ID)]
    for option in ("hide", "scratch", "keep"):
        for path in getattr(args, option):
            argv += ["--" + option, path]
    return argv + ["--"] + args.command


def isolate(args):
    """Enter the namespaces; `unshare` then runs the inner stage as PID 1's parent."""
    unshare = ["unshare"]
    if args.map_uid is None:
        unshare += ["--user", "--map-root-user"]
    else:
        enter_user_namespace(os.geteuid(), os.getegid(), args.map_uid)
    unshare += ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"]
    os.execvp(unshare[0], unshare + inner_argv(args))


def run_as_child(command):
    """Without namespaces: stay as the command's parent and pass on how it ended."""
    child = os.fork()
    if child == 0:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write("projectgen sandbox: cannot run %s: %s\n" % (command[0], exc))
        os._exit(127)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame, child=child: os.kill(child, signum))
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(os.waitstatus_to_exitcode(status))


# -- inner stage -------------------------------------------------------------------
def set_up_filesystem(args):
    workspace = os.path.realpath(args.workspace)
    covered = [os.path.realpath(p) for p in args.hide + args.scratch if os.path.isdir(p)]
    covered = [p for p in covered if p != "/"]
    keeps = [workspace] + [os.path.realpath(k) for k in args.keep if os.path.exists(k)]
    scratch = [os.path.realpath(s) for s in args.scratch]
    cover_keeping(covered, [k for k in keeps if any(under(k, c) for c in covered)], scratch, args.scratch_size)
    if not any(under(workspace, c) for c in covered):
        run("mount", "--bind", workspace, workspace)
    make_read_only([workspace] + scratch, keeps[1:])
    subprocess.run([tool("ip"), "link", "set", "lo", "up"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The working directory was opened before the mounts: re-enter it through the new view.
    os.chdir(os.getcwd())


def cover_keeping(covered, held, scratch, scratch_size):
    """Cover folders with empty tmpfs mounts, but bind the `held` paths inside them back.

    The held folders are parked on a private tmpfs while the covers go on, then
    bound back at their own paths.
    """
    hold = "/mnt" if os.path.isdir("/mnt") else "/media"
    run("mount", "-t", "tmpfs", "-o", "mode=0700,size=1m", "tmpfs", hold)
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.mkdir(spot)
        run("mount", "--bind", keep, spot)
    for path in covered:
        size = scratch_size if path in scratch else "1m"
        run("mount", "-t", "tmpfs", "-o", "mode=1777,size=" + size, "tmpfs", path)
    umask = os.umask(0o022)  # the folders leading to a kept path must be traversable by the sandbox uid
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.makedirs(keep, exist_ok=True)
        run("mount", "--bind", spot, keep)
        run("umount", "-l", spot)
    os.umask(umask)
    run("umount", "-l", hold)


def make_read_only(writable, keeps):
    """Remount everything read-only but the writable folders (kept paths inside them too),
    /sys and /proc/sys included: they are host state, but for /proc/sys/net."""
    subprocess.run(["mount", "--bind", "/proc/sys", "/proc/sys"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for point in mount_points():
        if point.startswith("/dev") or (point.startswith("/proc") and point != "/proc/sys"):
            continue
        if any(point == w or (under(point, w) and not any(under(point, k) for k in keeps)) for w in writable):
            continue
        subprocess.run(["mount", "-o", "remount,bind,ro", point], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def exec_contained(command, processes, drop_to):
    """Exec the command with no capabilities, the process limit, and (as root) the mapped uid."""
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]
    if drop_to is not None:
        # changing uid clears the parent-death signal `unshare --kill-child` set: keep it
        drop += ["--reuid=%d" % drop_to, "--regid=%d" % drop_to, "--clear-groups", "--pdeathsig=keep"]
    os.execvp(drop[0], drop + ["--"] + command)


def main(argv):
    args = parse_args(argv)
    if args.inside:
        set_up_filesystem(args)
        exec_contained(args.command, args.processes, args.drop_to)
    join_cgroups(args.cgroup_procs)
    if args.isolate:
        isolate(args)
    run_as_child(args.command)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except subprocess.CalledProcessError as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s %s\n" % (exc.cmd, (exc.stderr or b"").decode()))
        sys.exit(120)
    except OSError as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s\n" % exc)
        sys.exit(120)
