"""Starts the command under test: contained, limited, and unable to reach back.

One process, standard library only, run as `python -I -S` (no site-packages: the
runner's `.pth` files cost more than the rest of the launcher), imported as a
module (`launch`) so that its bytecode is cached, and importing only modules
that are built in or small, since this start-up is paid by every evaluation.
Everything is imported at the top: the interpreter's own folders may be hidden
once the mounts are made.

It applies the per-process resource limits (`--rlimit`), joins the run's v1
cgroups itself (`--join`: see `join_cgroups`; a v2 cgroup is joined by the
runner while this interpreter starts) and waits for the runner's go-ahead on
stdin (`start_sandboxed`). Without `--isolate` it then stays the
command's parent (so the command's `getppid()` is this shim, not the runner)
and passes on how it ended.

With `--isolate` it enters a new user namespace. As root it makes the map
itself: uid 0 inside stays host root (to set up mounts and read the test
environment), and a second id inside, `--map-uid`, is a host uid nobody else
uses; otherwise its own uid becomes root inside. Then new mount, network and
PID namespaces, and a fork: the child is PID 1 of the new PID namespace and
dies with this process (`PR_SET_PDEATHSIG`). The child mounts a fresh /proc,
makes every mount read-only except the workspace, hides the home folders
behind empty tmpfs mounts (re-exposing, read-only, the paths the test
environment needs), makes /sys and /proc/sys read-only, brings up loopback in
the empty network namespace, sets the process limit, and execs the command
through `setpriv` with every capability dropped and, as root, as the
unprivileged mapped uid: the kernel exempts host root from RLIMIT_NPROC and
lets it write root-owned files in /proc/sys and /sys, the mapped uid gets
neither. Mounts and the loopback are system calls, not `mount`/`ip`
processes: dozens of those cost more than the tests of a small suite.
"""
import _socket
import ctypes
import fcntl
import os
import _signal as signal  # not `signal`, whose enums cost more to import than the rest
import resource
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 0x1, 0x2, 0x4, 0x8, 0x20
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 0x400, 0x800, 0x1000, 0x4000
MS_PRIVATE, MS_RELATIME = 0x40000, 0x200000
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# Per-mount flags a remount must repeat: in a user namespace the kernel refuses to clear them.
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
              "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
RLIMITS = {"core": resource.RLIMIT_CORE, "as": resource.RLIMIT_AS, "fsize": resource.RLIMIT_FSIZE,
           "nofile": resource.RLIMIT_NOFILE}
INNER_SANDBOX_ID = 1000  # the mapped uid/gid as seen inside the namespace
SYSTEM_FOLDERS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
LIBC = ctypes.CDLL(None, use_errno=True)


class Options:
    """The command line: `--name value` options (repeatable ones collect a list), then `--` and the command."""

    REPEATED = ("join", "hide", "scratch", "keep", "rlimit")
    SINGLE = ("workspace", "processes", "map-uid", "scratch-size")

    def __init__(self, argv):
        self.isolate = False
        self.values = {"scratch-size": "1g"}
        self.lists = {name: [] for name in self.REPEATED}
        self.command = []
        index = 0
        while index < len(argv):
            arg = argv[index]
            if arg == "--":
                self.command = argv[index + 1:]
                break
            name = arg[2:] if arg.startswith("--") else ""
            if name == "isolate":
                self.isolate = True
                index += 1
                continue
            if (name not in self.REPEATED and name not in self.SINGLE) or index + 1 >= len(argv):
                raise SystemExit("projectgen sandbox: bad launcher argument %r" % arg)
            value = argv[index + 1]
            if name in self.REPEATED:
                self.lists[name].append(value)
            else:
                self.values[name] = value
            index += 2
        if not self.command:
            raise SystemExit("projectgen sandbox: no command given")

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


def umount_lazily(target):
    call(LIBC.umount2(encode(target), MNT_DETACH), "umount %s" % target)


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


def unmangle(field):
    """A path as /proc/self/mounts writes it: space, tab, newline and backslash octal-escaped."""
    for escaped, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(escaped, char)
    return field


def mount_points():
    """Every mount point, parents first, with the per-mount flags of the mount on top there."""
    flags = {}
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            parts = line.split()
            if len(parts) >= 4:
                flags[unmangle(parts[1])] = sum(KEPT_FLAGS.get(option, 0) for option in set(parts[3].split(",")))
    return sorted(flags.items(), key=lambda item: len(item[0]))


def under(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


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


def join_cgroups(tasks_files):
    """Move this (single-threaded) process into the run's v1 cgroups by writing "0" to their `tasks`
    files: the kernel skips its global lock for a thread moving itself, and so the RCU grace period
    (several milliseconds) that moving a whole process waits for."""
    for path in tasks_files:
        write_file(path, "0")


def wait_for_go():
    """Start nothing before the runner has moved this process into the run's cgroups (`start_sandboxed`):
    it says "1" on stdin. The command then gets /dev/null as its stdin."""
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


# -- without namespaces ---------------------------------------------------------------
def run_as_child(command):
    """Stay as the command's parent and pass on how it ended."""
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
    pass_on(status)


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


def isolate(options):
    """Enter the namespaces and run the command as PID 1 of the new PID namespace, passing on how it ended."""
    map_uid = options.number("map-uid")
    enter_user_namespace(os.geteuid(), os.getegid(), map_uid)
    call(LIBC.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID), "unshare(mount, net, pid)")
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
            set_up_filesystem(options)
            exec_contained(options.command, options.number("processes"),
                           None if map_uid is None else INNER_SANDBOX_ID)
        except Exception as exc:  # never return into the parent's code
            sys.stderr.write("projectgen sandbox set-up failed: %s\n" % exc)
        os._exit(120)
    os.close(alive_r)
    _, status = os.waitpid(child, 0)
    pass_on(status)


def set_up_filesystem(options):
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV)
    workspace = os.path.realpath(options.values["workspace"])
    hide, scratch_given, keep = options.lists["hide"], options.lists["scratch"], options.lists["keep"]
    covered = [os.path.realpath(p) for p in hide + scratch_given if os.path.isdir(p)]
    covered = [p for p in covered if p != "/"]
    keeps = [workspace] + [os.path.realpath(k) for k in keep if os.path.exists(k)]
    scratch = [os.path.realpath(s) for s in scratch_given]
    cover_keeping(covered, [k for k in keeps if any(under(k, c) for c in covered)], scratch,
                  options.values["scratch-size"])
    if not any(under(workspace, c) for c in covered):
        mount(workspace, workspace, None, MS_BIND)
    make_read_only([workspace] + scratch, keeps[1:])
    loopback_up()
    # The working directory was opened before the mounts: re-enter it through the new view.
    os.chdir(os.getcwd())


def cover_keeping(covered, held, scratch, scratch_size):
    """Cover folders with empty tmpfs mounts, but bind the `held` paths inside them back.

    The held folders are parked on a private tmpfs while the covers go on, then
    bound back at their own paths.
    """
    hold = "/mnt" if os.path.isdir("/mnt") else "/media"
    mount("tmpfs", hold, "tmpfs", 0, "mode=0700,size=1m")
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.mkdir(spot)
        mount(keep, spot, None, MS_BIND)
    for path in covered:
        size = scratch_size if path in scratch else "1m"
        mount("tmpfs", path, "tmpfs", 0, "mode=1777,size=" + size)
    umask = os.umask(0o022)  # the folders leading to a kept path must be traversable by the sandbox uid
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.makedirs(keep, exist_ok=True)
        mount(spot, keep, None, MS_BIND)
        umount_lazily(spot)
    os.umask(umask)
    umount_lazily(hold)


def make_read_only(writable, keeps):
    """Remount everything read-only but the writable folders (kept paths inside them too),
    /sys and /proc/sys included: they are host state, but for /proc/sys/net."""
    try:
        mount("/proc/sys", "/proc/sys", None, MS_BIND)
    except OSError:
        pass
    for point, flags in mount_points():
        if point.startswith("/dev") or (point.startswith("/proc") and point != "/proc/sys"):
            continue
        if any(point == w or (under(point, w) and not any(under(point, k) for k in keeps)) for w in writable):
            continue
        try:
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except OSError:
            pass  # as `mount -o remount,bind,ro` did: a mount that cannot change stays as it is


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


def exec_contained(command, processes, drop_to):
    """Exec the command with no capabilities, the process limit, and (as root) the mapped uid."""
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    setpriv = system_tool("setpriv")
    drop = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]
    if drop_to is not None:
        # changing uid clears the parent-death signal set above: keep it
        drop += ["--reuid=%d" % drop_to, "--regid=%d" % drop_to, "--clear-groups", "--pdeathsig=keep"]
    os.execv(setpriv, drop + ["--"] + command)


def main(argv):
    options = Options(argv)
    apply_limits(options.lists["rlimit"])
    join_cgroups(options.lists["join"])
    wait_for_go()
    if options.isolate:
        isolate(options)
    run_as_child(options.command)


def launch(argv):
    """Run `main`; a set-up that fails says why in one line and exits with status 120."""
    try:
        main(argv)
    except (OSError, ValueError) as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s\n" % exc)
        sys.exit(120)


if __name__ == "__main__":
    launch(sys.argv[1:])
