"""SIGINT and SIGTERM around the steps they may not cut in two (an output swapped into place, a cleanup): held back
by :func:`deferred_signals`; a signal recorded in a plain flag (:func:`note_stop_signal`) stops every later write
(:func:`check_not_stopping`) even when a library swallowed its exception (pyarrow's lazy import of pandas does)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading

__all__ = ["DEFERRED_SIGNALS", "Terminated", "check_not_stopping", "clear_stop_signal", "deferred_signals",
           "end_without_teardown", "ends_without_teardown", "keep_signal_handlers", "note_stop_signal",
           "process_ends_on_signal", "signal_ends_process", "stop_signal"]

#: The signals :func:`deferred_signals` holds back.
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Set from a signal handler, so a plain flag: a lock taken there (``threading.Event.set`` takes one) deadlocks
#: the process when a second signal's handler runs while the first one holds it.
_ending = False


#: The first SIGINT or SIGTERM that is stopping the running command (0: none); a plain value, for the same reason.
_stop_signal = 0


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every pending cleanup (``finally``, ``with``) runs."""


def note_stop_signal(signum: int) -> None:
    """Record that ``signum`` is stopping the running command (the first one stays); safe in a signal handler."""
    global _stop_signal
    if not _stop_signal:
        _stop_signal = signum


def stop_signal() -> int:
    return _stop_signal


def clear_stop_signal() -> None:
    """Forget the recorded signal: a new command starts, or the one it stopped has ended."""
    global _stop_signal
    _stop_signal = 0


def check_not_stopping() -> None:
    """Raise again the exception of the signal stopping the command, if one is (before an output is put in place)."""
    if _stop_signal == signal.SIGTERM:
        raise Terminated()
    if _stop_signal:
        raise KeyboardInterrupt


def signal_ends_process() -> None:
    """Say that a signal is ending this process, once the command's cleanups have run (safe in a signal handler)."""
    global _ending
    _ending = True


def process_ends_on_signal() -> bool:
    return _ending


#: Whether a library this process drives can no longer end cleanly (:func:`end_without_teardown`); a plain flag too.
_no_teardown = False


def end_without_teardown() -> None:
    """Say that the interpreter's teardown would hang on a library's state (Ray, once this machine's raylet died):
    the ``negplugins`` program then ends the process with the command's status as soon as the command ends."""
    global _no_teardown
    _no_teardown = True


def ends_without_teardown() -> bool:
    return _no_teardown


@contextlib.contextmanager
def deferred_signals():
    """Run the block with SIGINT and SIGTERM held back, then give the first one received to the handler it had;
    yields the list of signals received (checked before a point of no return). Main thread only."""
    pending: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield pending
        return
    previous = {}
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is None or handler == signal.SIG_IGN:  # not Python's, or ignored: leave it as it is
            continue
        previous[signum] = handler
        signal.signal(signum, lambda received, frame: pending.append(received))
    try:
        yield pending
    finally:
        _restore(previous)
        if pending:
            signum = pending[0]
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            else:  # SIG_DFL: the default action, now that the step is whole
                os.kill(os.getpid(), signum)


@contextlib.contextmanager
def keep_signal_handlers():
    """Run the block, then give SIGINT and SIGTERM back their Python handlers; a ``SystemExit(15)`` from the handler
    ``ray.init`` sets goes to the previous one, so the command ends with 143 and its message."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {signum: signal.getsignal(signum) for signum in DEFERRED_SIGNALS}
    try:
        yield
    except SystemExit as exit_:  # the block's own handler ran (SIGTERM during ray.init)
        previous = saved.get(signal.SIGTERM)
        if exit_.code != signal.SIGTERM or not callable(previous):
            raise
        _restore(saved)
        previous(signal.SIGTERM, None)
        raise
    finally:
        _restore(saved)


def _restore(saved: dict) -> None:
    for signum, handler in saved.items():
        if handler is not None:
            signal.signal(signum, handler)
