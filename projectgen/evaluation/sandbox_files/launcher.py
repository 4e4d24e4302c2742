"""Sets up the filesystem view inside the sandbox's namespaces, then execs the command.

Runs as root of a fresh user+mount namespace (made by `unshare`). It makes every
mount read-only except the workspace, hides the real home folders behind empty
tmpfs mounts (re-exposing, read-only, only the paths the test environment
needs: its interpreter and venv), brings up loopback in the empty network
namespace, and execs the command with all capabilities dropped so the code
under test cannot undo any of it. Standard library only.
"""
import argparse
import os
import subprocess
import sys


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def mount_points():
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1].encode().decode("unicode_escape") for line in mounts]
    return sorted(set(points), key=len)


def under(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--hide", action="append", default=[], help="replace with an empty read-only tmpfs")
    parser.add_argument("--scratch", action="append", default=[], help="replace with an empty writable tmpfs")
    parser.add_argument("--keep", action="append", default=[], help="stay visible (read-only) inside hidden folders")
    parser.add_argument("--scratch-size", default="1g")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    workspace = os.path.realpath(args.workspace)

    covered = [os.path.realpath(p) for p in args.hide + args.scratch if os.path.isdir(p)]
    covered = [p for p in covered if p != "/"]
    keeps = [workspace] + [os.path.realpath(k) for k in args.keep if os.path.exists(k)]
    held = [k for k in keeps if any(under(k, c) for c in covered)]

    # Park the folders that must stay visible on a private tmpfs, cover the
    # hidden folders, then bind the parked folders back at their own paths.
    hold = "/mnt" if os.path.isdir("/mnt") else "/media"
    run("mount", "-t", "tmpfs", "-o", "mode=0700,size=1m", "tmpfs", hold)
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.mkdir(spot)
        run("mount", "--bind", keep, spot)
    for path in covered:
        size = args.scratch_size if path in [os.path.realpath(s) for s in args.scratch] else "1m"
        run("mount", "-t", "tmpfs", "-o", "mode=1777,size=" + size, "tmpfs", path)
    for index, keep in enumerate(held):
        spot = os.path.join(hold, str(index))
        os.makedirs(keep, exist_ok=True)
        run("mount", "--bind", spot, keep)
        run("umount", "-l", spot)
    run("umount", "-l", hold)
    if workspace not in held:
        run("mount", "--bind", workspace, workspace)

    writable = [workspace] + [os.path.realpath(s) for s in args.scratch]
    for point in mount_points():
        if point.startswith(("/proc", "/dev", "/sys")):
            continue
        if any(point == w or (under(point, w) and not any(under(point, k) for k in keeps[1:])) for w in writable):
            continue
        subprocess.run(["mount", "-o", "remount,bind,ro", point], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "set", "lo", "up"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # The working directory was opened before the mounts: re-enter it through the new view.
    os.chdir(os.getcwd())
    drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
    os.execvp(drop[0], drop + command)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s %s\n" % (exc.cmd, (exc.stderr or b"").decode()))
        sys.exit(120)
