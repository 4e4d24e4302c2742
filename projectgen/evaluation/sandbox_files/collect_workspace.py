"""In the sandbox, after a system's step: the workspace's text files as one JSON line on stdout.

    python -I -S collect_workspace.py MAX_FILE_BYTES MAX_TOTAL_BYTES

The sandbox's disk goes with it, so what an external system wrote leaves through its step's output pipe.
Every process of the system's step is gone by now (the launcher kills them between steps). Only regular
files are read (links, FIFOs and devices are skipped, never opened), each up to MAX_FILE_BYTES and all of
them up to MAX_TOTAL_BYTES; what is skipped is named. The host checks every path again before writing.
"""
import json
import os
import stat
import sys

SKIPPED_DIRS = {"__pycache__", ".git", ".venv", ".pytest_cache", ".mypy_cache", "node_modules"}


def main(argv):
    most, total_most = int(argv[0]), int(argv[1])
    files, skipped, total = {}, [], 0
    for folder, subfolders, names in os.walk(".", followlinks=False):
        subfolders[:] = sorted(name for name in subfolders if name not in SKIPPED_DIRS)
        for name in sorted(names):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ".")
            try:
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode):
                    skipped.append([rel, "not a regular file"])
                    continue
                if info.st_size > most or total + info.st_size > total_most:
                    skipped.append([rel, "too large"])
                    continue
                with open(path, "rb") as handle:
                    data = handle.read(most + 1)
                files[rel] = data.decode("utf-8")
                total += len(data)
            except (OSError, UnicodeDecodeError) as exc:
                skipped.append([rel, type(exc).__name__])
    sys.stdout.write(json.dumps({"files": files, "skipped": skipped}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
