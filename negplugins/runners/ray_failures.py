"""Ray's own failures during a job of the Ray engine, said in one line: a worker or a node died
(:func:`ray_failure`), or this machine's raylet, whose death Ray would answer by ending this process with its own
lines only (:class:`RayletWatch` notices it first and stops the job in the main thread).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from ..errors import error_line

#: Ray's exceptions for a failure of Ray itself (:mod:`ray.exceptions`), most specific first: what happened.
_RAY_FAILURES = (
    ("LocalRayletDiedError", "the Ray raylet of this machine died"),
    ("NodeDiedError", "a node of the Ray cluster died"),
    ("WorkerCrashedError", "a Ray worker process died"),
    ("RayActorError", "a Ray worker process died"),  # ActorDiedError, ActorUnavailableError
    ("OwnerDiedError", "a Ray process holding the job's data died"),
    ("ObjectLostError", "Ray lost data of the job (a worker or node holding it died)"),
    ("RaySystemError", "Ray failed internally"),
)


def ray_failure(error: BaseException) -> str | None:
    """What happened, when ``error`` (or an exception it was raised from) is a failure of Ray itself, else ``None``:
    ``"a Ray worker process died (ActorDiedError: The actor died unexpectedly ...)"``."""
    try:
        from ray import exceptions
    except ImportError:
        return None
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        for name, what in _RAY_FAILURES:
            kind = getattr(exceptions, name, None)
            if kind is not None and isinstance(error, kind):
                return f"{what} ({type(error).__name__}: {error_line(error)})"
        error = error.__cause__ or error.__context__
    return None


#: The signal that wakes the main thread when the raylet died (a Python handler runs, even inside ``ray.get``).
_WAKE = signal.SIGUSR1


class RayletWatch:
    """Watches this machine's raylet while a job runs (from the main thread): its death raises ``KeyboardInterrupt``
    (the one exception Ray's blocking calls let through) inside a call wrapped in :meth:`inside`, or before it."""

    def __init__(self, ray, interval: float = 0.5):
        self.pid = _raylet_pid(ray) if threading.current_thread() is threading.main_thread() else None
        self.interval = interval
        self.died = False
        self._inside = False
        self._stop = threading.Event()

    def __enter__(self) -> RayletWatch:
        if self.pid is None:
            return self
        self._previous = signal.signal(_WAKE, self._wake)
        self._thread = threading.Thread(target=self._watch, name="negplugins-raylet-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.pid is None:
            return
        self._stop.set()
        self._thread.join()
        signal.signal(_WAKE, self._previous)

    @contextlib.contextmanager
    def inside(self):
        """The block is a call into Ray: the raylet's death interrupts it."""
        self._inside = True  # before the check: a death noticed in between is seen by one or the other
        try:
            if self.died:
                raise KeyboardInterrupt
            yield
        finally:
            self._inside = False

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            if not _alive(self.pid):
                self.died = True
                signal.pthread_kill(threading.main_thread().ident, _WAKE)
                return

    def _wake(self, signum, frame) -> None:
        if self._inside and self.died:
            raise KeyboardInterrupt


def _raylet_pid(ray) -> int | None:
    """The process id of the raylet this process's Ray talks to, when it runs on this machine; else ``None``."""
    try:
        node = ray._private.worker._global_node
        started = (node.all_processes or {}).get("raylet") or []
        if started:  # the local Ray this process started
            return started[0].process.pid
        socket = os.fsencode(node.raylet_socket_name)
    except (AttributeError, TypeError, ValueError):  # Ray's private layout changed: no watch
        return None
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    arguments = f.read().split(b"\0")
            except OSError:
                continue
            if arguments and arguments[0].endswith(b"raylet") and any(socket in a for a in arguments):
                return int(entry.name)
    return None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True
