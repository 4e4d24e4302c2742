"""Runs a session's steps (an install, then the tests) contained, limited and unable to reach back.

One process, standard library only, run as `python -I -S` (no site-packages: the
runner's `.pth` files cost more than the rest of the launcher), imported as a
module (`launch`) so that its bytecode is cached, and importing only modules
that are built in or small, since this start-up is paid by every evaluation.
Everything is imported at the top: the host's folders are gone once the new
root is in place.

It dies with the runner (`PR_SET_PDEATHSIG`, and it checks that its parent is
still the runner), applies the per-process resource limits (`--rlimit`), joins
the run's v1 cgroups itself (`--join`: see `join_cgroups`; a v2 cgroup is joined
by the runner while this interpreter starts) and waits for the runner's go-ahead
on stdin (`start_sandboxed`). Then it runs the steps of `--steps` (a marshal file
the runner wrote with the same interpreter) one after another, each with its own environment, output pipe,
file descriptors and timeout, which this launcher enforces itself: a step that
outlives it is killed with everything it started. A line per step on
`--status-fd` says how it ended and what its processes used (`ended INDEX finished|timeout EXIT|-
CPU_US MAXRSS_KB WALL_US`: `measure_step`; without namespaces first `started INDEX PID`, its process
group). A step marked `stop_on_failure` that fails ends the session.

Without `--isolate` the steps run in the workspace as it is, each in its own
session and process group.

With `--isolate` it enters a new user namespace. As root it makes the map
itself: uid 0 inside stays host root (to set up mounts and read the test
environment), and a second id inside, `--map-uid`, is a host uid nobody else
uses; otherwise its own uid becomes root inside. Then new mount, network, PID,
IPC and UTS namespaces, and a fork: the child is PID 1 of the new PID namespace
and dies with this process. The child builds a new root on an empty tmpfs at
`--mountpoint`, capped in bytes and inodes (`--root-size`, `--root-inodes`: the
run's disk): the system folders (/usr and its links), a short list of /etc
entries and the `--bind` folders (the test environment, the interpreter) bound
read-only, a few device nodes, a fresh /proc (its /proc/sys read-only), a new
devpts, private /tmp and the `--private` folders, and a copy of `--workspace`
owned by the sandboxed uid but for the `--protect` paths (the suite: its folders and files),
which wait in a covered folder until the first step that runs with the suite (`Suite`; an
install step runs without) and are then bound read-only in place, the folders above them
pinned. Nothing else of the host is there: no homes, no
datasets or checkouts, no other run, no /run and no /sys. It pivots into that
root, detaches the old one, brings up loopback in the empty network namespace,
and as PID 1 runs each step through `setpriv` with every capability dropped and,
as root, as the unprivileged mapped uid (the kernel exempts host root from
RLIMIT_NPROC, the mapped uid is not). Between steps and at the end it kills
every process the step left; after each step that ran with the suite it checks its mounts. Mounts and the loopback are system calls, not
`mount`/`ip` processes: dozens of those cost more than the tests of a small suite.
"""
import _socket
import ctypes
import fcntl
import marshal
import os
import _signal as signal  # not `signal`, whose enums cost more to import than the rest
import resource
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 0x1, 0x2, 0x4, 0x8, 0x20
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 0x400, 0x800, 0x1000, 0x4000
MS_PRIVATE, MS_RELATIME = 0x40000, 0x200000
ST_RELATIME = 0x1000
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# statvfs flags a read-only remount must repeat: in a user namespace the kernel refuses to clear them.
KEPT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME
RLIMITS = {"core": resource.RLIMIT_CORE, "as": resource.RLIMIT_AS, "fsize": resource.RLIMIT_FSIZE,
           "nofile": resource.RLIMIT_NOFILE}
INNER_SANDBOX_ID = 1000  # the mapped uid/gid as seen inside the namespace
SYSTEM_FOLDERS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
ROOT_ENTRIES = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What of /etc a program may need to start, resolve localhost, find certificates or a JDK; no secrets.
ETC_ENTRIES = ("alternatives", "ca-certificates", "ca-certificates.conf", "debian_version", "fonts", "gai.conf",
               "host.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "magic",
               "magic.mime", "mime.types", "nsswitch.conf", "os-release", "protocols", "services", "ssl",
               "timezone")
ETC_PREFIXES = ("java-", "python3")
DEVICES = ("null", "zero", "full", "random", "urandom")
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
SETUP_FAILED = 120
LIBC = ctypes.CDLL(None, use_errno=True)


class Options:
    """The command line: `--name value` options (repeatable ones collect a list), then nothing else."""

    REPEATED = ("join", "bind", "private", "rlimit")
    SINGLE = ("workspace", "mountpoint", "protect", "steps", "status-fd", "parent", "processes", "map-uid",
              "root-size", "root-inodes")

    def __init__(self, argv):
        self.isolate = False
        self.values = {"root-size": str(2 * 1024**3), "root-inodes": "200000"}
        self.lists = {name: [] for name in self.REPEATED}
        index = 0
        while index < len(argv):
            arg = argv[index]
            name = arg[2:] if arg.startswith("--") else ""
            if name == "isolate":
                self.isolate = True
                index += 1
                continue
            if (name not in self.REPEATED and name not in self.SINGLE) or index + 1 >= len(argv):
                raise ValueError("bad launcher argument %r" % arg)
            value = argv[index + 1]
            if name in self.REPEATED:
                self.lists[name].append(value)
            else:
                self.values[name] = value
            index += 2
        for needed in ("workspace", "steps", "status-fd"):
            if needed not in self.values:
                raise ValueError("--%s is required" % needed)

    def number(self, name):
        value = self.values.get(name)
        return None if value is None else int(value)


def call(result, what):
    """Raise OSError (with errno) when a libc call failed."""
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "%s: %s" % (what, os.strerror(errno)))


def mount(source, target, fstype, flags, data=None):
    call(LIBC.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)),
         "mount %s" % target)


def encode(text):
    return None if text is None else os.fsencode(text)


def write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def system_tool(name):
    """A system program from the system folders, never from the test environment's PATH."""
    for folder in SYSTEM_FOLDERS:
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return name


def apply_limits(specs):
    """`name=value` per-process limits, soft and hard (a lower hard limit already in place stays)."""
    for spec in specs:
        name, _, value = spec.partition("=")
        kind = RLIMITS[name]
        wanted = int(value)
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(kind, (wanted, wanted))


def die_with_parent(parent):
    """SIGKILL this process when the runner dies; if it died already, stop here."""
    call(LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if parent is not None and os.getppid() != parent:
        os._exit(SETUP_FAILED)


def join_cgroups(tasks_files):
    """Move this (single-threaded) process into the run's v1 cgroups by writing "0" to their `tasks`
    files: the kernel skips its global lock for a thread moving itself, and so the RCU grace period
    (several milliseconds) that moving a whole process waits for."""
    for path in tasks_files:
        write_file(path, "0")


def wait_for_go():
    """Start nothing before the runner has moved this process into the run's cgroups (`start_sandboxed`):
    it says "1" on stdin. The steps then get /dev/null as their stdin."""
    go = os.read(0, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if go != b"1":
        raise OSError("the runner could not move the run into its cgroup")


def pass_on(status):
    """Exit the way the child did: with its exit code, or by its signal (no interpreter clean-up: nothing
    is left to flush, and the run is not over for the runner until this process is gone)."""
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


# -- steps ----------------------------------------------------------------------------
def run_steps(steps, status_fd, contained, processes, drop_to, suite=None):
    """Run each step to its end or its timeout, say how it ended on `status_fd`, and kill what it left.

    As PID 1 of the namespace (`contained`) that is every other process in it (`kill(-1)`); without
    namespaces, the step's process group. In namespaces the `suite` is mounted before the first step that
    wants it (`"suite"`, true unless the runner says otherwise: an install runs without it), once every
    process of the steps before is gone; after each step that ran with it, each of its mounts is checked,
    and one that changed ends the session (`swapped INDEX PATH` on `status_fd`); what the steps before left
    where the suite goes is moved aside and said (`displaced INDEX PATH`)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    for index, step in enumerate(steps):
        if suite is not None and not suite.placed and step.get("suite", True):
            for rel in mount_suite(suite):
                os.write(status_fd, b"displaced %d %s\n" % (index, os.fsencode(rel)))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        child = os.fork()
        if child == 0:
            become_step(step, contained, processes, drop_to)
        if not contained:  # the runner kills this group too if it has to stop the session itself
            os.write(status_fd, b"started %d %d\n" % (index, child))
        peak = [0]
        stop, status = wait_for_step(child, step["timeout"], contained, peak)
        wall = time.monotonic() - started
        kill_leftovers(child, contained, peak)
        code = None if status is None else os.waitstatus_to_exitcode(status)
        os.write(status_fd, b"ended %d %s %s %s\n" % (index, stop.encode(), b"-" if code is None else b"%d" % code,
                                                      measure_step(before, peak[0], wall)))
        changed = suite_changed(suite) if suite is not None and suite.placed else None
        if changed is not None:
            os.write(status_fd, b"swapped %d %s\n" % (index, os.fsencode(changed)))
            break
        if step.get("stop_on_failure") and (stop != "finished" or code != 0):
            break


def measure_step(before, peak_kb, wall):
    """`CPU_US MAXRSS_KB WALL_US` of a step: the user and system time of every process of it this launcher
    reaped (its RUSAGE_CHILDREN grew by them: as PID 1 that is all of them, orphans included), the largest
    peak resident size among them (each one's wait4 rusage, which covers what it reaped itself), and its
    wall time. The kernel keeps these figures and this launcher reads them: the code under test can neither
    write nor lower them, and never sees the pipe they go through."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return b"%d %d %d" % (round(cpu * 1e6), peak_kb, round(wall * 1e6))


def reaped(peak, usage):
    """Keep the largest peak resident size (KiB) of the step's reaped processes in `peak[0]`."""
    if usage.ru_maxrss > peak[0]:
        peak[0] = usage.ru_maxrss


def become_step(step, contained, processes, drop_to):
    """In the forked child: the step's descriptors, session, working folder and limits, then exec it."""
    try:
        call(LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.setsid()
        output = int(step["output_fd"])
        os.dup2(output, 1)
        os.dup2(output, 2)
        keep = sorted({0, 1, 2, *(int(fd) for fd in step.get("pass_fds", ()))})
        for low, high in zip(keep, keep[1:] + [65536]):
            os.closerange(low + 1, high)
        for fd in keep:
            os.set_inheritable(fd, True)
        os.chdir(step["cwd"])
        env = step["env"]
        if contained:
            if processes:
                resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            setpriv = system_tool("setpriv")
            drop = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]
            if drop_to is not None:
                # changing uid clears the parent-death signal set above: keep it
                drop += ["--reuid=%d" % drop_to, "--regid=%d" % drop_to, "--clear-groups", "--pdeathsig=keep"]
            os.execve(setpriv, drop + ["--"] + list(step["argv"]), env)
        os.execvpe(step["argv"][0], list(step["argv"]), env)
    except BaseException as exc:  # never return into the launcher's loop
        try:
            os.write(2, ("projectgen sandbox: cannot run %s: %s\n" % (step["argv"][0], exc)).encode())
        finally:
            os._exit(127)


def wait_for_step(child, timeout, contained, peak):
    """("finished", wait status) once the step's process ends, or ("timeout", None) at its deadline;
    as PID 1, orphans that end on the way are reaped too (their peak memory kept in `peak`)."""
    deadline = time.monotonic() + float(timeout)
    while True:
        while True:
            try:
                pid, status, usage = os.wait4(-1 if contained else child, os.WNOHANG)
            except ChildProcessError:
                return "finished", None
            if pid == 0:
                break
            reaped(peak, usage)
            if pid == child:
                return "finished", status
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout", None
        signal.sigtimedwait({signal.SIGCHLD}, min(remaining, 1.0))


def kill_leftovers(child, contained, peak):
    """SIGKILL what the step left (all of it, daemons included, as PID 1) and reap it, its peak memory kept."""
    if contained:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        while True:
            try:
                reaped(peak, os.wait4(-1, 0)[2])
            except ChildProcessError:
                return
    try:
        os.killpg(child, signal.SIGKILL)
    except OSError:
        pass
    try:
        reaped(peak, os.wait4(child, 0)[2])
    except ChildProcessError:
        pass


# -- namespaces -----------------------------------------------------------------------
def enter_user_namespace(host_uid, host_gid, sandbox_id):
    """unshare(CLONE_NEWUSER) with uid/gid 0 -> ours and, given a sandbox id, INNER_SANDBOX_ID -> it.

    Only a process outside the new namespace may write a map with two lines,
    so a forked helper writes that one once we have unshared.
    """
    if sandbox_id is None:
        call(LIBC.unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")
        write_file("/proc/self/setgroups", "deny")
        write_file("/proc/self/uid_map", "0 %d 1\n" % host_uid)
        write_file("/proc/self/gid_map", "0 %d 1\n" % host_gid)
        return
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
    failed = LIBC.unshare(CLONE_NEWUSER) != 0
    errno = ctypes.get_errno()
    os.write(ready_w, b"0" if failed else b"1")
    os.close(ready_w)
    _, status = os.waitpid(helper, 0)
    if failed:
        raise OSError(errno, "unshare(CLONE_NEWUSER): " + os.strerror(errno))
    if status != 0:
        raise OSError("could not write the user namespace's id maps")


def write_map(pid, kind, host_id, sandbox_id):
    write_file("/proc/%d/%s_map" % (pid, kind), "0 %d 1\n%d %d 1\n" % (host_id, INNER_SANDBOX_ID, sandbox_id))


def isolate(options, steps):
    """Enter the namespaces; PID 1 of the new PID namespace builds the new root and runs the steps."""
    map_uid = options.number("map-uid")
    enter_user_namespace(os.geteuid(), os.getegid(), map_uid)
    call(LIBC.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS),
         "unshare(mount, net, pid, ipc, uts)")
    alive_r, alive_w = os.pipe()  # the child sees end-of-file here once this process is gone
    child = os.fork()
    if child == 0:
        os.close(alive_w)
        try:
            call(LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            os.set_blocking(alive_r, False)
            try:
                if os.read(alive_r, 1) == b"":
                    os._exit(1)  # the parent died before the death signal was set
            except BlockingIOError:
                pass
            owner = INNER_SANDBOX_ID if map_uid is not None else 0
            suite = build_root(options, owner)
            loopback_up()
            run_steps(steps, options.number("status-fd"), True, options.number("processes"),
                      None if map_uid is None else INNER_SANDBOX_ID, suite)
            os._exit(0)
        except Exception as exc:  # never return into the parent's code
            sys.stderr.write("projectgen sandbox set-up failed: %s\n" % exc)
        os._exit(SETUP_FAILED)
    os.close(alive_r)
    _, status = os.waitpid(child, 0)
    pass_on(status)


# -- the new root ---------------------------------------------------------------------
def build_root(options, owner):
    """The new root: an empty, capped tmpfs with only what the steps need bound or copied in; then pivot."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = os.path.realpath(options.values["mountpoint"])
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV,
          "mode=0755,size=%s,nr_inodes=%s" % (options.values["root-size"], options.values["root-inodes"]))
    for name in ROOT_ENTRIES:
        mirror("/" + name, root)
    make_etc(root, owner)
    make_dev(root)
    for path in options.lists["bind"]:
        if os.path.exists(path):
            mirror(os.path.realpath(path), root)
    workspace = os.path.realpath(options.values["workspace"])
    inside = root + workspace
    os.makedirs(inside, mode=0o755)
    listing = options.values.get("protect")
    entries = suite_entries(workspace, listing) if listing and os.path.exists(listing) else []
    copy_tree(workspace, inside, owner, set(entries))
    os.lchown(inside, owner, owner)
    suite = hold_suite(root, workspace, entries, owner)
    for path in options.lists["private"]:
        os.makedirs(root + path, mode=0o700, exist_ok=True)
        os.lchown(root + path, owner, owner)
    for path in ("/tmp", "/var/tmp", "/dev/shm"):
        os.makedirs(root + path, exist_ok=True)
        os.chmod(root + path, 0o1777)
    os.makedirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV)
    mount(root + "/proc/sys", root + "/proc/sys", None, MS_BIND)
    remount_read_only(root + "/proc/sys", MS_NOSUID | MS_NOEXEC | MS_NODEV)
    pin_folders(root, workspace, entries, owner)
    pivot(root)
    os.chdir(workspace)
    return suite


def mirror(path, root):
    """`path` in the new root as on the host: a link stays a link, a folder or file is bound read-only."""
    target = root + path
    if os.path.islink(path):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.readlink(path), target)
        return
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    elif os.path.exists(path):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    else:
        return
    bind_read_only(path, target)


def bind_read_only(source, target):
    """Bind `source` at `target` read-only, repeating the flags of the mount it is on."""
    try:
        mount(source, target, None, MS_BIND)
    except OSError:
        mount(source, target, None, MS_BIND | MS_REC)  # a mount with locked mounts below it binds only whole
    flags = os.statvfs(target).f_flag
    remount_read_only(target, (flags & KEPT_FLAGS) | (MS_RELATIME if flags & ST_RELATIME else 0))


def remount_read_only(target, flags):
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)


def make_etc(root, owner):
    """/etc with the ETC_ENTRIES of the host and an account list that names only the sandbox's users."""
    etc = root + "/etc"
    os.makedirs(etc)
    for name in os.listdir("/etc"):
        if name in ETC_ENTRIES or name.startswith(ETC_PREFIXES):
            mirror("/etc/" + name, root)
    home = "/nonexistent"
    with open(etc + "/passwd", "w") as passwd:
        passwd.write("root:x:0:0:root:/root:/usr/sbin/nologin\n"
                     "sandbox:x:%d:%d:sandbox:%s:/bin/sh\n"
                     "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" % (INNER_SANDBOX_ID,
                                                                                       INNER_SANDBOX_ID, home))
    with open(etc + "/group", "w") as group:
        group.write("root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n" % INNER_SANDBOX_ID)


def make_dev(root):
    """A /dev with the harmless device nodes, the usual links and a private devpts (no host terminal)."""
    dev = root + "/dev"
    os.makedirs(dev)
    for name in DEVICES:
        os.close(os.open(dev + "/" + name, os.O_WRONLY | os.O_CREAT, 0o644))
        mount("/dev/" + name, dev + "/" + name, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev + "/" + name)
    os.makedirs(dev + "/pts")
    try:
        mount("devpts", dev + "/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
        os.symlink("pts/ptmx", dev + "/ptmx")
    except OSError:
        pass  # no pseudo-terminals: a test that opens one fails, nothing else does


def copy_tree(source, target, owner, skipped=frozenset()):
    """Copy the workspace into the new root, owned by the sandboxed uid, but for the `skipped` paths
    (relative to `source`); an explicit stack, not recursion (the runner wrote this folder, but depth is
    never a reason to fail)."""
    stack = [(source, target, "")]
    while stack:
        here, there, rel = stack.pop()
        with os.scandir(here) as entries:
            for entry in entries:
                destination = there + "/" + entry.name
                inner = rel + entry.name
                if inner in skipped:
                    continue
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), destination)
                elif entry.is_dir(follow_symlinks=False):
                    os.mkdir(destination, 0o755)
                    stack.append((entry.path, destination, inner + "/"))
                elif entry.is_file(follow_symlinks=False):
                    copy_file(entry.path, destination, entry.stat(follow_symlinks=False))
                else:
                    continue  # no device, FIFO or socket is ever copied in
                os.lchown(destination, owner, owner)


def copy_file(source, target, info):
    """Contents, permission bits (owner-writable: tests change their fixtures; no set-id bits) and mtime."""
    mode = (info.st_mode & 0o777) | 0o200
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            left = info.st_size
            while left > 0:
                sent = os.sendfile(writing, reading, None, min(left, 1 << 30))
                if sent == 0:
                    break
                left -= sent
        finally:
            os.close(writing)
    finally:
        os.close(reading)
    os.chmod(target, mode)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


# -- the suite: held back, then mounted read-only -------------------------------------------
class Suite:
    """The suite's entries (files and whole folders, relative to the workspace), held back in a folder of
    the new root that an empty read-only mount covers (`held`: a descriptor of it, the only way left to
    reach it), until `mount_suite` binds each read-only where it belongs; then what each one is (device,
    inode), for `suite_changed`."""

    def __init__(self, workspace, entries, held):
        self.workspace = workspace
        self.entries = entries
        self.held = held
        self.placed = False
        self.mounted = {}


def suite_entries(workspace, listing):
    """The protect list's paths (the runner's `protected_paths.suite_mounts`) that are a file or a folder
    of the workspace reached through no link, but for those inside another one (its mount holds them)."""
    with open(listing) as names:
        paths = sorted({rel.strip("/") for rel in names.read().splitlines() if rel.strip("/")})
    paths = [rel for rel in paths if os.path.realpath(workspace + "/" + rel) == workspace + "/" + rel
             and (os.path.isfile(workspace + "/" + rel) or os.path.isdir(workspace + "/" + rel))]
    return [rel for rel in paths if not any(rel.startswith(other + "/") for other in paths)]


def hold_suite(root, workspace, entries, owner):
    """Copy the suite's entries into a folder of the new root, and cover that folder with an empty read-only
    mount: the steps that run before the suite is mounted (the install) find no suite anywhere."""
    held = root + "/.projectgen-suite"
    os.mkdir(held, 0o700)
    for rel in entries:
        path, target = workspace + "/" + rel, held + "/" + rel
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.isdir(path):
            os.mkdir(target, 0o755)
            copy_tree(path, target, owner)
        else:
            copy_file(path, target, os.stat(path))
        os.lchown(target, owner, owner)
    descriptor = os.open(held, os.O_PATH | os.O_DIRECTORY)
    mount("tmpfs", held, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=2,mode=0")
    return Suite(workspace, entries, descriptor)


def pin_folders(root, workspace, entries, owner):
    """Bind each folder between the workspace and a suite entry onto itself, writable: a mount point can be
    neither renamed nor removed (EBUSY), so no step can move a suite's folder away and put a look-alike in
    its place. The workspace itself only where the code under test owns its parent (it runs as the
    namespace's root): otherwise it may not rename it anyway, and a mount there would make moving a file
    between it and the temp folder fail (EXDEV)."""
    folders = {os.path.dirname(rel) for rel in entries}
    for folder in list(folders):
        while folder:
            folder = os.path.dirname(folder)
            folders.add(folder)
    if owner != 0:
        folders.discard("")
    for folder in sorted(folders, key=lambda rel: rel.count("/") + bool(rel)):  # outer first: a pin hides
        # the mounts made below its folder before it
        path = root + workspace + ("/" + folder if folder else "")
        if os.path.isdir(path) and not os.path.islink(path):
            mount(path, path, None, MS_BIND)


def mount_suite(suite):
    """Bind each held entry read-only where it belongs, a folder as a whole (nothing in it can be written,
    renamed or removed), and note what each is. Whatever a step left at such a path is moved aside first
    and returned: the suite is never read from what the code under test wrote."""
    displaced = []
    for rel in suite.entries:
        source = "/proc/self/fd/%d/%s" % (suite.held, rel)
        if not os.path.lexists(source):
            continue
        target = suite.workspace + "/" + rel
        if os.path.lexists(target):
            os.rename(target, "%s/.%s.displaced-%d" % (os.path.dirname(target), os.path.basename(target),
                                                       time.monotonic_ns()))  # a name no step could know
            displaced.append(rel)
        if os.path.isdir(source):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        mount(source, target, None, MS_BIND)
        remount_read_only(target, MS_NOSUID | MS_NODEV)
        found = os.lstat(target)
        suite.mounted[rel] = (found.st_dev, found.st_ino)
    suite.placed = True
    return displaced


def suite_changed(suite):
    """The first mounted entry that is no longer what was mounted there, or None."""
    for rel, (device, inode) in suite.mounted.items():
        try:
            found = os.lstat(suite.workspace + "/" + rel)
        except OSError:
            return rel
        if (found.st_dev, found.st_ino) != (device, inode):
            return rel
    return None


def pivot(root):
    """Make `root` the root and let go of the old one (pivot_root(2); chroot where its number is unknown)."""
    number = PIVOT_ROOT.get(os.uname().machine)
    os.chdir(root)
    if number is None:
        mount(root, "/", None, 0x2000)  # MS_MOVE
        call(LIBC.chroot(b"."), "chroot")
        os.chdir("/")
        return
    os.mkdir(root + "/.old-root")
    call(LIBC.syscall(number, b".", b".old-root"), "pivot_root")
    os.chdir("/")
    call(LIBC.umount2(b"/.old-root", MNT_DETACH), "umount old root")
    os.rmdir("/.old-root")


def loopback_up():
    """`ip link set lo up`, as the ioctl it is (the network namespace starts with lo down)."""
    try:
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    except OSError:
        return
    try:
        request = fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, b"lo".ljust(40, b"\0"))
        flags = int.from_bytes(request[16:18], sys.byteorder) | IFF_UP
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, request[:16] + flags.to_bytes(2, sys.byteorder) + request[18:])
    except OSError:
        pass
    finally:
        sock.close()


def main(argv):
    options = Options(argv)
    die_with_parent(options.number("parent"))
    apply_limits(options.lists["rlimit"])
    join_cgroups(options.lists["join"])
    with open(options.values["steps"], "rb") as steps_file:
        steps = marshal.load(steps_file)  # not json: importing it (and `re`) costs more than the rest
    wait_for_go()
    if options.isolate:
        isolate(options, steps)
    run_steps(steps, options.number("status-fd"), False, None, None)
    os._exit(0)


def launch(argv):
    """Run `main`; a set-up that fails says why in one line and exits with status 120."""
    try:
        main(argv)
    except (OSError, ValueError) as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s\n" % exc)
        sys.exit(SETUP_FAILED)


if __name__ == "__main__":
    launch(sys.argv[1:])
