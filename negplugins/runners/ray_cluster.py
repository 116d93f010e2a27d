"""The Ray cluster of the Ray engine (:mod:`negplugins.runners.ray_engine`): which engine was asked for, a Ray
session for one job, the actors' resources and the errors a job reports."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import traceback
import warnings
from dataclasses import dataclass
from importlib import metadata

from .._compat.crash_handlers import jvm_handles_segv, keep_crash_handlers
from ..errors import UserError, error_line
from ..io.interrupts import ends_without_teardown, keep_signal_handlers, process_ends_on_signal
from ..options import check_int

#: ``--engine`` values: one Python process (the default), or a Ray cluster.
ENGINES = ("single", "ray")
#: Largest ``--ray-workers``.
MAX_RAY_WORKERS = 4096


class RayJobError(UserError):
    """The Ray job failed (a worker died, the cluster went away); ``traceback_text`` is Ray's (``-v`` shows it)."""

    def __init__(self, message: str, *, detail: BaseException | None = None):
        super().__init__(message)
        self.traceback_text = "".join(traceback.format_exception(detail)) if detail is not None else None


@dataclass(frozen=True)
class RayEngine:
    """Where and how wide the model work runs: the cluster to join (default: a local Ray with ``num_cpus``) and the
    actors (default: one per GPU, else one per node)."""

    address: str | None = None
    workers: int | None = None
    num_cpus: int | None = None


def engine_of(engine) -> RayEngine | None:
    """``None`` for the single-process engine (``None`` or ``"single"``), else the :class:`RayEngine`."""
    if engine is None or engine == "single":
        return None
    if engine == "ray":
        return RayEngine()
    if isinstance(engine, RayEngine):
        if engine.workers is not None:
            check_int(engine.workers, "--ray-workers", 1, MAX_RAY_WORKERS)
        if engine.num_cpus is not None:
            check_int(engine.num_cpus, "num_cpus", 1, MAX_RAY_WORKERS)
        if engine.address is not None and not str(engine.address).strip():
            raise UserError("--ray-address: expected a Ray cluster address (auto, HOST:6379), got an empty value")
        return engine
    raise UserError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")


def describe(engine) -> dict:
    """The ``engine`` parameter recorded in a run's sidecar and an index's manifest."""
    ray_engine = engine_of(engine)
    if ray_engine is None:
        return {"name": "single"}
    try:
        version = metadata.version("ray")
    except Exception:  # noqa: BLE001 - ray missing or without metadata: the run fails later with a clear message
        version = None
    return {"name": "ray", "ray": version, "address": ray_engine.address or "local",
            "workers": ray_engine.workers or "auto",
            "output": "the same batches as --engine single, so the same index and run"}


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401 - the engine needs Ray Data (pip install 'ray[data]')
    except ImportError:
        raise UserError("--engine ray needs Ray Data: pip install 'negplugins[ray]'") from None
    return ray


@contextlib.contextmanager
def session(engine: RayEngine):
    """Ray for the duration of a job: the caller's session, a joined cluster, or a local Ray shut down after."""
    ray = import_ray()
    quiet_ray(ray)
    if ray.is_initialized():
        if jvm_handles_segv() is False:
            warnings.warn("this process runs Lucene's JVM and its own Ray, started without keep_crash_handlers(): "
                          "Ray replaced the JVM's crash handlers, so the JVM's next internal fault (a Java "
                          "StackOverflowError, say) ends the process; start Ray inside "
                          "negplugins.runners.ray_engine.keep_crash_handlers()", RuntimeWarning, stacklevel=3)
        yield ray
        return
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if engine.address:
        check_reachable(engine.address)
    try:
        # the JVM's crash handlers, when Lucene runs in this process (negplugins/_compat/crash_handlers.py), and
        # the command line's SIGTERM handler (Ray's would exit with status 15, no cleanup message)
        with keep_crash_handlers(), keep_signal_handlers():
            if engine.address:
                ray.init(address=engine.address, **quiet)
            else:
                ray.init(num_cpus=engine.num_cpus or os.cpu_count() or 1, include_dashboard=False, **quiet)
    except (TypeError, AttributeError, NameError):  # the suite called Ray wrongly: a bug, shown as one
        raise
    except Exception as error:  # noqa: BLE001 - Ray raises plain Exception too ("The current node timed out ...")
        where = f"--ray-address {engine.address}" if engine.address else "a local Ray"
        raise UserError(f"{where}: Ray could not be started or joined ({error_line(error)}); check that its "
                        f"processes may start here (a raylet killed or too slow to start on a loaded machine "
                        f"gives this), then run the command again") from None
    try:
        yield ray
    finally:
        # Not when a signal ends the program (ray.shutdown() under Ray Data's threads ends the process before its
        # cleanups; the local Ray's processes end with it anyway), nor once this machine's raylet died (it would wait).
        if not process_ends_on_signal() and not ends_without_teardown():
            with keep_crash_handlers():
                ray.shutdown()


def check_reachable(address: str, timeout: float = 10.0) -> None:
    """Fail at once on a ``HOST:PORT`` nobody answers at (Ray itself would retry for minutes)."""
    match = re.fullmatch(r"\[?([^\[\]/]+?)\]?:(\d+)", address.strip())
    if match is None:  # auto, ray://..., an environment's address: left to Ray
        return
    try:
        socket.create_connection((match.group(1), int(match.group(2))), timeout=timeout).close()
    except OSError as error:
        raise UserError(f"--ray-address {address}: no Ray cluster answers there ({error.strerror or error}); start "
                        f"one with `ray start --head` or leave out --ray-address for a local Ray") from None


def quiet_ray(ray) -> None:
    """No Ray Data progress bars or messages on the terminal (its log files keep them); the engine reports."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for handler in logging.getLogger("ray.data").handlers:
        if handler.get_name() == "console":
            handler.setLevel(logging.CRITICAL)


_RAISED = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit)): (.+)$")


def worker_error(error: BaseException) -> tuple[str, str] | None:
    """``(exception class name, message's first line)`` of the exception a Ray worker raised, else ``None``: read from
    the traceback text Ray hands the driver (Ray Data drops the exception object itself)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    for line in text.splitlines():
        match = _RAISED.match(line.strip())
        if match and not line.strip().startswith("ray."):
            return match.group(1), match.group(2).strip()
    return None


def user_error_names() -> set[str]:
    names, todo = set(), [UserError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names - {"RayJobError"}


@dataclass(frozen=True)
class WorkerPlan:
    workers: int
    num_cpus: int
    num_gpus: int

    @property
    def device(self) -> str:
        return "cuda" if self.num_gpus else "cpu"


def worker_plan(ray, engine: RayEngine, gpus: bool = True, groups: int | None = None) -> WorkerPlan:
    """Actors and their resources: one GPU each when the cluster has GPUs, else CPUs shared out evenly; never
    more actors than ``groups`` (the job's units of work)."""
    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    gpu_total = int(sum(node.get("GPU", 0) for node in nodes)) if gpus else 0
    if gpu_total:
        workers = engine.workers or gpu_total
        if workers > gpu_total:
            raise UserError(f"--ray-workers {workers}: the Ray cluster has {gpu_total} GPU(s), one per worker")
        return WorkerPlan(min(workers, groups or workers), 1, 1)
    cpu_nodes = [int(node.get("CPU", 0)) for node in nodes if node.get("CPU", 0) >= 1]
    if not cpu_nodes:
        raise UserError("the Ray cluster has no CPU to run the model on")
    workers = engine.workers or len(cpu_nodes)
    if workers > sum(cpu_nodes):
        raise UserError(f"--ray-workers {workers}: the Ray cluster has {sum(cpu_nodes)} CPU(s), at least one per "
                        f"worker")
    workers = min(workers, groups or workers)
    per_worker = max(1, min(max(cpu_nodes), sum(cpu_nodes) // workers))
    while sum(cpus // per_worker for cpus in cpu_nodes) < workers:  # every actor must fit on a node
        per_worker -= 1
    return WorkerPlan(workers, per_worker, 0)

