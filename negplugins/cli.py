"""The ``negplugins`` command line: a thin shell over the Python API, with the suite's one error policy (a user
error is one line with status 2, a bug one line with status 1 or its traceback with ``-v``; Ctrl-C and SIGTERM end
a command with its cleanups run, status 130 or 143). Each package adds its commands (:data:`COMMAND_MODULES`).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import select
import signal
import sys
import threading
import traceback

from .environment import cache_folders, check_environment
from .errors import UserError, os_error_message
from .io.interrupts import (
    Terminated,
    clear_stop_signal,
    ends_without_teardown,
    note_stop_signal,
    process_ends_on_signal,
    signal_ends_process,
    stop_signal,
)

__all__ = ["main", "build_parser"]

_PROG = "negplugins"

#: Modules with ``add_commands(commands, runners)``: the top-level subparsers and those of ``negplugins search``.
COMMAND_MODULES: tuple[str, ...] = (
    "negplugins.evaluation.commands",
    "negplugins.demo",
    "negplugins.runners.commands",
    "negplugins.leaderboard.commands",
    "negplugins.beir.commands",
    "negplugins.reportcard.commands",
)


def build_parser() -> argparse.ArgumentParser:
    from .runners.commands import add_search_command

    parser = _Parser(
        prog=_PROG, description="Negation, exclusion and Boolean-logic retrieval benchmarks for Pyserini, "
                                "ir_datasets and ir_measures.")
    parser.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE_HELP)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    runners = add_search_command(commands)  # topics, index, search and its bm25 (the runners' package)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(commands, runners)
    _verbose_everywhere(parser)
    return parser


_VERBOSE_HELP = "show progress logs of ir_datasets and Anserini, and the traceback of an internal error"


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line; ``-m`` values regrouped so that they do not take the positionals."""

    def parse_known_args(self, args=None, namespace=None):
        if args is not None:
            from .evaluation.commands import regroup_measures

            args = regroup_measures(self, list(args))
        return super().parse_known_args(args, namespace)

    def error(self, message):
        command = self.prog[len(_PROG):].strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"{_PROG}: error: {where}{message} (see '{self.prog} --help')\n")


def _verbose_everywhere(parser: argparse.ArgumentParser) -> None:
    """Accept ``-v`` after the subcommand too (``negplugins evaluate ... -v``), without overriding it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                if "-v" not in sub._option_string_actions:
                    sub.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                                     help=_VERBOSE_HELP)
                _verbose_everywhere(sub)


#: Whether this process is the ``negplugins`` program, which ends once a signal's cleanups ran.
_AS_PROGRAM = False


def _on_signal(signum, frame):
    note_stop_signal(signum)  # first: the exception below may be lost in third-party code, the flag is not
    _stopping()
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt


def _stopping() -> None:
    """Ignore further signals so that they cannot cut the cleanups short."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # first: a signal from here on finds the handler that waits
        signal.signal(signum, _already_stopping)
    if _AS_PROGRAM:
        signal_ends_process()


def _already_stopping(signum, frame):
    pass


def main(argv=None) -> int:
    """Run one command and return its exit status; SIGTERM ends it like Ctrl-C (status 143, 130)."""
    if threading.current_thread() is not threading.main_thread():
        return _interruptible(argv)
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    clear_stop_signal()
    signal.signal(signal.SIGTERM, _on_signal)
    if previous[signal.SIGINT] is signal.default_int_handler:  # Python's own (not SIG_IGN, as under nohup)
        signal.signal(signal.SIGINT, _on_signal)
    try:
        status = _interruptible(argv)
    finally:
        for signum, handler in previous.items():
            _ended(signal.signal, signum, handler)
        clear_stop_signal()  # the process goes on (a caller of main): its own writes are not this command's
    return status


def run() -> None:
    """The ``negplugins`` program: :func:`main`, then exit with its status, signals ignored from then on."""
    global _AS_PROGRAM
    _AS_PROGRAM = True
    try:
        status = main()
    except KeyboardInterrupt:  # a second signal while the first one was being answered
        status = 130
    except Terminated:
        status = 143
    for signum in (signal.SIGINT, signal.SIGTERM):
        _ended(signal.signal, signum, signal.SIG_IGN)
    if status in (130, 143) or process_ends_on_signal() or ends_without_teardown():
        _exit_now(status)
    sys.exit(status)


def _exit_now(status: int) -> None:
    """End the process without the interpreter's teardown, which can turn the status into a signal's (CPython 3.11
    re-raises SIGINT at exit after an unhandled ``KeyboardInterrupt``; Ray's core worker can abort in its teardown)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            _ended(stream.flush)
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            pass
    os._exit(status)


def _ended(call, *args, **kwargs) -> None:
    """``call(*args, **kwargs)``, ignoring a signal's exception: the command has ended."""
    try:
        call(*args, **kwargs)
    except (KeyboardInterrupt, Terminated):
        pass


def _interruptible(argv) -> int:
    """:func:`_main`; a signal that came meanwhile decides the status, even if its exception was swallowed."""
    caught = None
    try:
        status = _main(argv)
    except KeyboardInterrupt:
        caught = signal.SIGINT
    except Terminated:
        caught = signal.SIGTERM
    signum = stop_signal() or caught
    if not signum:
        return status
    terminated = signum == signal.SIGTERM
    _ended(print, f"{_PROG}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


def _main(argv) -> int:
    try:
        check_environment()  # before ir_datasets is imported (building the parser imports it)
        parser = build_parser()
    except UserError as error:
        return _user_error(error)
    except OSError as error:
        return _os_error(error, sys.argv[1:] if argv is None else argv, verbose="-v" in (argv or sys.argv))
    args = parser.parse_args(argv)
    from ._compat import jvm

    jvm.reduce_signal_use()  # Ctrl-C and SIGTERM reach Python, whose cleanups run (not the JVM's System.exit)
    if not args.verbose:
        logging.disable(logging.INFO)  # ir_datasets sets INFO on each logger it uses: a parent's level would not hold
        os.environ.setdefault("IR_DATASETS_DL_DISABLE_PBAR", "true")
        jvm.quiet_java_logs()  # no "INFO: Using MemorySegmentIndexInput" from Lucene when the JVM starts
    from ir_datasets_ext.disk import DiskSpaceError
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    from .io.command_inputs import command_inputs, reading

    try:
        with reading(*command_inputs(args)):  # no output of the command may be, or be inside, what it reads
            status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except (UserError, DownloadError, DiskSpaceError, FormatError) as error:
        if args.verbose and getattr(error, "traceback_text", None):  # another library's failure behind it (Ray's)
            print(error.traceback_text, file=sys.stderr, end="")
        return _user_error(error)
    except BrokenPipeError:
        if not _stdout_closed():
            return _internal_error(args.verbose)
        return 0  # the reader went away (negplugins evaluate ... | head): nothing more to say
    except OSError as error:
        return _os_error(error, _named_paths(args), args.verbose)
    except Exception:  # noqa: BLE001 - a bug in the suite: shown as such, never as a user error
        return _internal_error(args.verbose)


def _named_paths(args) -> list[str]:
    """Every value the user gave on the command line (paths among them: outputs, indexes, runs)."""
    values = (item for value in vars(args).values() for item in (value if isinstance(value, (list, tuple)) else [value]))
    return [item for item in values if isinstance(item, str) and item]


def _os_error(error: OSError, named, verbose: bool) -> int:
    """An ``OSError`` whose cause the user can fix is a user error (status 2); any other is a bug."""
    message = os_error_message(error, named=named, caches=cache_folders(), workdir=os.getcwd())
    return _internal_error(verbose) if message is None else _user_error(message)


def _user_error(message) -> int:
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return 2


def _stdout_closed() -> bool:
    """Whether standard output is a pipe with no reader; if so, it is pointed at /dev/null so exit is quiet."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file descriptor: assume it was stdout
        return True
    if closed:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    return closed


def _internal_error(verbose: bool) -> int:
    """Report the exception being handled as a bug: its traceback with ``-v``, else one line; status 1."""
    error = sys.exc_info()[1]
    if verbose:
        traceback.print_exc()
    elif not stop_signal():  # after a signal, a consequence of it (a library half imported): said as such after
        message = " ".join(str(error).split("\n")).strip()
        print(f"{_PROG}: internal error: {type(error).__name__}: {message} "
              f"(run with -v for the traceback; please report it)", file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    run()
