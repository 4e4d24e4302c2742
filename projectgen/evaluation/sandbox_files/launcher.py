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
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--keep", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    workspace = os.path.realpath(args.workspace)
    hold = os.path.join(workspace, ".projectgen", "hold")

    run("mount", "--bind", workspace, workspace)
    hidden = [os.path.realpath(h) for h in args.hide if os.path.isdir(h) and not under(workspace, os.path.realpath(h))]
    keeps = [os.path.realpath(k) for k in args.keep if os.path.exists(k)]
    held = []
    for index, keep in enumerate(keeps):
        if any(under(keep, h) for h in hidden):
            spot = os.path.join(hold, str(index))
            os.makedirs(spot, exist_ok=True)
            run("mount", "--bind", keep, spot)
            held.append((spot, keep))
    for path in hidden:
        run("mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", path)
    for spot, keep in held:
        os.makedirs(keep, exist_ok=True)
        run("mount", "--bind", spot, keep)
        run("umount", "-l", spot)

    for point in mount_points():
        if under(point, workspace) or point.startswith(("/proc", "/dev", "/sys")):
            continue
        subprocess.run(["mount", "-o", "remount,bind,ro", point], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "set", "lo", "up"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
    os.execvp(drop[0], drop + command)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as exc:
        sys.stderr.write("projectgen sandbox set-up failed: %s %s\n" % (exc.cmd, (exc.stderr or b"").decode()))
        sys.exit(120)
