"""Keep the JVM's crash-signal handlers when Ray starts or stops in the same process (Linux only): ``ray.init`` and
``ray.shutdown`` replace the ``SIGSEGV`` handler through which the JVM turns faults (a null check, a stack overflow)
into Java behaviour, and its next such fault would end the process.
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
    return action if libc.sigaction(int(signum), None, action) == 0 else None


@contextlib.contextmanager
def keep_crash_handlers():
    """Run the block (``ray.init()``), then restore the handlers that :data:`FATAL_SIGNALS` had before it."""
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
