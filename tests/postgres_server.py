"""A throwaway PostgreSQL server for the tests that checkpoint to PostgreSQL.

Uses $PROJECTGEN_TEST_POSTGRES_URL when set; otherwise starts a private cluster from
Debian's PostgreSQL binaries (initdb/pg_ctl) in a temp folder, on a Unix socket only, and
stops it afterwards. PostgreSQL refuses to run as root, so as root the cluster belongs to
the `postgres` account. Without the binaries the tests skip with the reason.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

URL_VARIABLE = "PROJECTGEN_TEST_POSTGRES_URL"
PORT = 54329


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None


def _as_owner(command: list[str], owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--", *command] if owner else command


@contextmanager
def postgres_server() -> Iterator[str | None]:
    """Yield a connection URL, or None (with nothing started) when no server can be had here."""
    if os.environ.get(URL_VARIABLE):
        yield os.environ[URL_VARIABLE]
        return
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not (initdb and pg_ctl):
        yield None
        return
    owner = None
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            yield None
            return
        owner = "postgres"
    # Straight under /tmp, which the `postgres` account can reach (pytest's own temp folders are 0700).
    root = Path(tempfile.mkdtemp(prefix="projectgen-postgres-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir(parents=True)
    if owner:
        for path in (root, sockets):
            os.chown(path, account.pw_uid, account.pw_gid)
        root.chmod(0o755)
    subprocess.run(_as_owner([initdb, "-D", str(data), "-A", "trust", "-U", "projectgen", "--no-sync"], owner),
                   check=True, capture_output=True, timeout=120)
    options = f"-p {PORT} -k {sockets} -c listen_addresses='' -c fsync=off"
    subprocess.run(_as_owner([pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "server.log"), "-w",
                              "start"], owner), check=True, capture_output=True, timeout=120)
    try:
        yield f"postgresql://projectgen@/postgres?host={sockets}&port={PORT}"
    finally:
        subprocess.run(_as_owner([pg_ctl, "-D", str(data), "-m", "immediate", "stop"], owner), capture_output=True,
                       timeout=60)
        shutil.rmtree(root, ignore_errors=True)
