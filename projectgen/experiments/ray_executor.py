"""The batch engine on a Ray cluster (`RayExecutor`): each unit one Ray task, on as many machines as the cluster has.

Resources. Each unit is one Ray task declaring ``num_cpus`` (default 1) and one unit of the
custom resource ``sandbox``, which caps the units (each with its sandboxed test runs) running at
once on a node: start a node with ``ray start ... --resources='{"sandbox": N}'``. Without
``address`` the executor starts a local Ray instance for the command, with ``workers`` sandbox
slots (so ``--workers`` means what it means for the local executor); with ``address`` it joins
that cluster (the command must run on one of its nodes; Ray Client ``ray://`` addresses are
refused), and ``workers``, when given, caps the units in flight. A test that has started Ray
already (``ray.init``) is joined as it is.

Files. Only the driver writes the ledger (the engine does, from the rows that come back). A
unit on the driver's node works in the driver's folders (as absolute paths: a worker's working
directory is not the driver's). A unit on another node does not assume a shared filesystem: it
runs `relocated` in a temporary folder of that machine and its folder is mirrored to the
driver's copy by a `projectgen.experiments.mirror.FolderCopy` actor pinned to the driver's node,
while it runs (after each model call is recorded, before each checkpoint, and every few
seconds) and at its end, before its row goes back. The driver's copy, not a shared store, is the
truth: a retried unit starts from it, `projectgen trace` reads it while the unit runs, and no
storage service beyond Ray is needed. Inputs are not copied: every node needs projectgen (same
version) and the dataset at the driver's path, as every node needs the same code.

Faults. A unit whose worker process or node dies is retried by Ray (``retries`` times, default 3)
on any node with room; it resumes from the driver's copy of its folder and its checkpoint
(PostgreSQL, when units may land on other machines), so no completed model call is made again.
A unit still lost after its retries comes back through the engine's `lost`: recorded as failed
with the reason. A Ray worker process is one of the executor's workers: `setup` runs on its first
unit of a batch and the state is kept for its next ones (`worker_state`), as the local executor
keeps one per thread (a sandbox runner probes the machine's isolation once, about half a second).

Authentication. Ray has token authentication since 2.52; Ray 2.60 (the version the ``ray`` extra
pins) turns it on by itself for a local instance started here (a token in ``~/.ray/auth_token``, ``RAY_AUTH_MODE=token`` set for this
process and its workers), which needs nothing from the user. Joining a cluster started with
``RAY_AUTH_MODE=token`` needs the same variable and the cluster's token (``RAY_AUTH_TOKEN``, or
``~/.ray/auth_token`` from ``ray get-auth-token``); without it the command stops with one line
saying so. See docs/scale-out.md.
"""
from __future__ import annotations

import functools
import math
import os
import shutil
import tempfile
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

from projectgen.errors import ProjectGenError, error_line, first_line
from projectgen.experiments.mirror import Change, FolderCopy, Mirror, Ticker, unpack

U = TypeVar("U")
S = TypeVar("S")
R = TypeVar("R")

SANDBOX_RESOURCE = "sandbox"
RAY_EXTRA = "pip install 'projectgen[ray]'"
Relocation = Literal["auto", "always", "never"]


def import_ray() -> Any:
    """Ray, or a one-line error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ProjectGenError(f"--executor ray needs Ray: {RAY_EXTRA}") from None
    return ray


@dataclass
class RayExecutor:
    """Runs units as Ray tasks (see the module docstring).

    `address`: a running cluster (``HOST:PORT`` of its head, or ``auto``); None starts a local
    instance. `workers`: sandbox slots of that local instance, and a cap on the units in flight
    (None: no cap beyond the cluster's resources). `cpus`: CPUs each unit declares. `retries`: how
    often a unit whose worker died is tried again. `relocate`: ``auto`` moves the units that land
    on another node than the driver's to a folder of their own machine; ``always`` moves every unit
    (a test of the mirror on one machine); ``never`` trusts a shared filesystem.
    """

    address: str | None = None
    workers: int | None = None
    cpus: float = 1.0
    retries: int = 3
    relocate: Relocation = "auto"
    remote = True  # work, setup and units are pickled to Ray's worker processes

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ProjectGenError(f"workers must be at least 1, got {self.workers}")
        if self.address is not None and self.address.startswith("ray://"):
            raise ProjectGenError(f"--ray-address {self.address}: Ray Client addresses are not supported; run the "
                                  "command on a node of the cluster and give its head as HOST:PORT (or auto)")

    def connect(self) -> RayExecutor:
        """Start the local instance or join the cluster (once per process), and check its sandbox slots."""
        ray = import_ray()
        if not ray.is_initialized():
            try:
                if self.address is None:
                    slots = self.workers or 1
                    ray.init(num_cpus=max(os.cpu_count() or 1, math.ceil(slots * self.cpus)),
                             resources={SANDBOX_RESOURCE: slots}, include_dashboard=False)
                else:
                    check_reachable(self.address)
                    ray.init(address=self.address)
            except ray.exceptions.AuthenticationError as exc:
                raise ProjectGenError(f"the Ray cluster at {self.address} wants its token ({first_line(exc)}): set "
                                      "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (or ~/.ray/auth_token from `ray "
                                      "get-auth-token` on its head)") from None
            except (ConnectionError, RuntimeError, ValueError) as exc:
                hint = ""
                if self.address is not None and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
                    hint = ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token and its token "
                            "(RAY_AUTH_TOKEN, or ~/.ray/auth_token), see docs/scale-out.md")
                raise ProjectGenError(f"cannot start or join Ray{f' at {self.address}' if self.address else ''}: "
                                      f"{first_line(exc)}{hint}") from None
        if ray.cluster_resources().get(SANDBOX_RESOURCE, 0) < 1:
            raise ProjectGenError(f"the Ray cluster declares no `{SANDBOX_RESOURCE}` resource, so no unit could start: "
                                  f"start each node with ray start ... --resources='{{\"{SANDBOX_RESOURCE}\": N}}' "
                                  "(N units with their sandboxes at once on that node)")
        return self

    def nodes(self) -> int:
        """The cluster's live nodes (connecting first)."""
        self.connect()
        ray = import_ray()
        return sum(1 for node in ray.nodes() if node.get("Alive"))

    def refuse_per_machine(self, per_machine: Mapping[str, str]) -> None:
        """Refuse state kept per machine (`what` -> the option that shares it) when units may land on other
        machines: a unit retried elsewhere, or a later attempt of its task, would not find it."""
        if not per_machine:
            return
        nodes = self.nodes()
        if nodes > 1:
            fixes = "; ".join(f"{what}: give {option}" for what, option in per_machine.items())
            raise ProjectGenError(f"the Ray cluster has {nodes} nodes and units may run on any of them, but state "
                                  f"would stay on whichever machine ran it ({fixes})")

    def describe(self) -> str:
        """One line for the command's output: where the units run."""
        self.connect()
        ray = import_ray()
        slots = int(ray.cluster_resources().get(SANDBOX_RESOURCE, 0))
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
        return f"units run on {where}: {self.nodes()} node(s), {slots} sandbox slot(s)"

    def run(self, work: Callable[[U, S], R], units: Sequence[U], setup: Callable[[], S],
            lost: Callable[[U, str], R] | None = None) -> Iterator[R]:
        """Yield each unit's result as its Ray task finishes (see `projectgen.experiments.engine.Executor`)."""
        self.connect()
        ray = import_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        units = list(units)
        if not units:
            return
        driver = ray.get_runtime_context().get_node_id()
        # Absolute, resolved here: a worker's working directory is not the driver's.
        workspaces = {unit.key: str(Path(unit.workspace).resolve()) for unit in units if hasattr(unit, "relocated")}
        copy = None
        if workspaces and self.relocate != "never" and (self.relocate == "always" or self.nodes() > 1):
            copy = ray.remote(FolderCopy).options(
                num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(driver, soft=False),
            ).remote(list(workspaces.values()))
        task = ray.remote(run_unit).options(num_cpus=self.cpus, resources={SANDBOX_RESOURCE: 1},
                                            max_retries=self.retries, retry_exceptions=False)
        shipped = (ray.put(work), ray.put(setup), uuid.uuid4().hex)  # the last names this batch's worker states
        todo, running = deque(units), {}
        cap = self.workers or len(units)
        try:
            while todo or running:
                while todo and len(running) < cap:
                    unit = todo.popleft()
                    place = Placement(workspaces.get(unit.key), getattr(unit, "workspace_is_file", False), driver,
                                      self.relocate)
                    running[task.remote(*shipped, unit, place, copy)] = unit
                finished, _ = ray.wait(list(running), num_returns=1)
                for ref in finished:
                    unit = running.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:  # work or setup raised: a bug, as for any executor
                        raise exc.as_instanceof_cause() from None
                    except ray.exceptions.RayError as exc:
                        if lost is None:
                            raise
                        result = lost(unit, f"its Ray worker was lost {self.retries + 1} time(s), the last time: "
                                            f"{error_line(exc)}")
                    yield result
        finally:
            for ref in running:  # the consumer stopped (Ctrl-C): the units still running end with it
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - finished or gone meanwhile
                    pass
            if copy is not None:
                ray.kill(copy)


@dataclass(frozen=True)
class Placement:
    """Where a unit's task works: its workspace on the driver (absolute; None: the unit has none), whether
    that is one file, the driver's node, and the executor's relocation rule."""

    workspace: str | None
    is_file: bool
    driver_node: str
    relocate: Relocation


@functools.lru_cache(maxsize=2)
def worker_states(batch: str) -> list[Any]:
    """This worker process's state for `batch`, in a one-item list filled by its first unit (a process
    serves one batch at a time; the cache keeps the last two so a new batch does not evict the old
    one's state while its last unit ends)."""
    return []


def worker_state(batch: str, setup: Callable[[], Any]) -> Any:
    """`setup()` once per worker process and batch (see the module docstring)."""
    state = worker_states(batch)
    if not state:
        state.append(setup())
    return state[0]


def run_unit(work: Callable[[Any, Any], Any], setup: Callable[[], Any], batch: str, unit: Any, place: Placement,
             copy: Any) -> Any:
    """The Ray task of one unit: in the driver's folder on the driver's node, else relocated and mirrored."""
    import ray

    if place.workspace is None:
        return work(unit, worker_state(batch, setup))
    here = ray.get_runtime_context().get_node_id()
    moved = copy is not None and (place.relocate == "always" or (place.relocate == "auto" and here != place.driver_node))
    if not moved:
        return work(unit.relocated(Path(place.workspace)), worker_state(batch, setup))
    token, snapshot = ray.get(copy.claim.remote(place.workspace))
    scratch = Path(tempfile.mkdtemp(prefix=f"projectgen-unit-{here[:12]}-"))  # the node, for whoever looks
    try:
        local = scratch / Path(place.workspace).name
        unpack(snapshot, local, is_file=place.is_file)
        mirror = Mirror(local, send=partial(send_changes, copy, place.workspace, token), is_file=place.is_file)
        mirror.baseline()
        ticker = Ticker(mirror.flush).start()
        try:
            return work(unit.relocated(local, sync=mirror.flush), worker_state(batch, setup))
        finally:
            ticker.stop()
            mirror.flush(final=True)  # also after a failure: the folder is what a later resume starts from
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def send_changes(copy: Any, workspace: str, token: str, changes: list[Change], removed: list[str]) -> None:
    """Apply a worker's changes to the driver's copy, and wait until they are written."""
    import ray

    ray.get(copy.apply.remote(workspace, token, changes, removed))


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse, in one line and within seconds, a HOST:PORT nothing answers at: Ray itself retries an
    unreachable head for many minutes, printing as it goes, before it gives up."""
    import socket

    host_port = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = host_port.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return  # `auto`, or a form Ray reads itself
    host = host.strip("[]")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except socket.gaierror as exc:
        raise ProjectGenError(f"cannot join Ray at {address}: host {host!r} not found ({exc.strerror})") from None
    except OSError as exc:
        raise ProjectGenError(f"cannot join Ray at {address}: nothing answers there "
                              f"({exc.strerror or type(exc).__name__}); is the cluster's head running?") from None
