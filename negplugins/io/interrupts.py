"""Steps that SIGINT and SIGTERM may not cut in two: the swap of an output into place and the cleanups.

Ctrl-C raises ``KeyboardInterrupt`` wherever the main thread happens to be, and the command line turns SIGTERM
into an exception the same way (:class:`negplugins.cli.Terminated`). Most of a command may stop anywhere: its
outputs are written beside their destination and its ``finally`` blocks remove them. But a few steps must
run whole or not at all: moving a previous output aside and the new one into its place, or removing a
temporary file in a ``finally`` block (an exception raised inside that block, before the removal, leaves the
file behind). :func:`deferred_signals` holds SIGINT and SIGTERM back while such a step runs and delivers
them, to the handler they had, as soon as it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

__all__ = ["DEFERRED_SIGNALS", "deferred_signals", "keep_signal_handlers", "process_ends_on_signal",
           "signal_ends_process"]

#: The signals :func:`deferred_signals` holds back.
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Set from a signal handler, so a plain flag: a lock taken there (``threading.Event.set`` takes one) deadlocks
#: the process when a second signal's handler runs while the first one holds it.
_ending = False


def signal_ends_process() -> None:
    """Say that a signal is ending this process: the ``negplugins`` program calls it when SIGINT or SIGTERM
    stops its command, and ends the process as soon as the command's cleanups have run. Safe in a signal handler
    that another signal interrupts: it takes no lock."""
    global _ending
    _ending = True


def process_ends_on_signal() -> bool:
    """Whether a signal is ending this process (:func:`signal_ends_process`); never in a process that called the
    suite's Python API, or ``negplugins.cli.main``, itself."""
    return _ending


class _Pending:
    """The signals received while a step ran; ``bool(pending)`` is whether any came."""

    def __init__(self):
        self.received: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.received)

    def record(self, signum, frame) -> None:
        self.received.append(signum)


@contextlib.contextmanager
def deferred_signals():
    """Run the block with SIGINT and SIGTERM held back; deliver the first one received when it ends.

    A signal received during the block is given, once the block has ended (normally or by an exception),
    to the Python handler it had before: ``KeyboardInterrupt`` for SIGINT, the command line's exception for
    SIGTERM. A signal whose handler is the default action ends the process once the block has ended; an
    ignored signal stays ignored. Outside the main thread (where Python delivers no signal) and for a
    signal handled outside Python, the block simply runs.

    Yields
    ------
    object
        True (``bool``) once a signal has been received: a step that can still be undone checks it before
        its point of no return.

    Examples
    --------
    >>> with deferred_signals() as pending:  # doctest: +SKIP
    ...     os.replace(path, aside)
    ...     os.replace(tmp, path)
    ...     if pending:
    ...         undo()
    """
    pending = _Pending()
    if threading.current_thread() is not threading.main_thread():
        yield pending
        return
    previous = {}
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is None or handler == signal.SIG_IGN:  # not Python's, or ignored: leave it as it is
            continue
        previous[signum] = handler
        signal.signal(signum, pending.record)
    try:
        yield pending
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if pending:
            signum = pending.received[0]
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            else:  # SIG_DFL: the default action, now that the step is whole
                os.kill(os.getpid(), signum)


@contextlib.contextmanager
def keep_signal_handlers():
    """Run the block, then give SIGINT and SIGTERM back the Python handlers they had before it.

    ``ray.init`` sets its own SIGTERM handler in the main thread (``sys.exit(15)``): a command on Ray then
    ended with status 15, without its message, instead of the command line's 143. A ``SystemExit(15)`` from
    that handler during the block (SIGTERM while Ray starts) is handed to the handler SIGTERM had before.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {signum: signal.getsignal(signum) for signum in DEFERRED_SIGNALS}
    try:
        yield
    except SystemExit as exit_:  # the block's own handler ran (SIGTERM during ray.init): answer as before it
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
