"""Steps that SIGINT and SIGTERM may not cut in two: the swap of an output into place and the cleanups.

Ctrl-C raises ``KeyboardInterrupt`` wherever the main thread happens to be, and the command line turns SIGTERM
into an exception the same way (:class:`Terminated`). Most of a command may stop anywhere: its
outputs are written beside their destination and its ``finally`` blocks remove them. But a few steps must
run whole or not at all: moving a previous output aside and the new one into its place, or removing a
temporary file in a ``finally`` block (an exception raised inside that block, before the removal, leaves the
file behind). :func:`deferred_signals` holds SIGINT and SIGTERM back while such a step runs and delivers
them, to the handler they had, as soon as it ends.

The exception a signal raises may not survive: third-party code running when it lands can swallow it (pyarrow
imports pandas lazily, and loses an exception raised inside that import). So the command line's handlers also
record the signal in a plain flag (:func:`note_stop_signal`), and every point that puts an output in place asks
:func:`check_not_stopping` first: once a signal has come, nothing more is written, whatever became of its exception.
"""

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
    """Record that ``signum`` is stopping the running command (the first one recorded stays). Safe in a signal
    handler: it takes no lock and imports nothing."""
    global _stop_signal
    if not _stop_signal:
        _stop_signal = signum


def stop_signal() -> int:
    """The signal stopping the running command (:func:`note_stop_signal`), else 0."""
    return _stop_signal


def clear_stop_signal() -> None:
    """Forget the recorded signal: a new command starts, or the one it stopped has ended."""
    global _stop_signal
    _stop_signal = 0


def check_not_stopping() -> None:
    """Raise the recorded signal's exception again, if a signal is stopping the command: called before an output is
    put in place, so that a signal whose exception third-party code swallowed still writes nothing.

    Raises
    ------
    KeyboardInterrupt
        SIGINT came.
    Terminated
        SIGTERM came.
    """
    if _stop_signal == signal.SIGTERM:
        raise Terminated()
    if _stop_signal:
        raise KeyboardInterrupt


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


#: Whether a library this process drives can no longer end cleanly (:func:`end_without_teardown`); a plain flag too.
_no_teardown = False


def end_without_teardown() -> None:
    """Say that the interpreter's teardown would hang or crash on a library's state (Ray, once the raylet of this
    machine died: its exit handler waits for the raylet, and its core worker ends the process meanwhile): the
    ``negplugins`` program then ends the process as soon as the command has ended, with the command's status."""
    global _no_teardown
    _no_teardown = True


def ends_without_teardown() -> bool:
    """Whether :func:`end_without_teardown` was called in this process."""
    return _no_teardown


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
