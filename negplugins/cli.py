"""The ``negplugins`` command line: a thin layer over the Python API.

The shell and the error policy. Each package adds its own commands beside its code: ``topics``, ``index`` and
``search`` with its runners in :mod:`negplugins.runners.commands`, and those of :data:`COMMAND_MODULES`
(``evaluate`` and ``validate`` in :mod:`negplugins.evaluation.commands`, ``demo`` in :mod:`negplugins.demo`, ...). Options follow Pyserini's names where they overlap (``--hits``,
``--k1``, ``--b``, ``--threads``), and one thing has one name in every command: ``--model`` for a model
(``search dense`` also takes its old ``--encoder``), ``--hits`` for documents per query (default
:data:`~negplugins.options.DEFAULT_HITS`, 1000, in every search runner), ``--run-tag`` for the run's last
column (``leaderboard sidecar`` also takes its old ``--tag``), ``--no-check-docs`` to skip the document id
check (``validate`` also takes its old ``--no-documents``). Old spellings are accepted, hidden from
``--help``.

Each command declares what it reads besides the datasets' files, ``set_defaults(reads=options_read("run", ...))``
(:mod:`negplugins.io.command_inputs`): none of its outputs may be, or lie inside, any of it.

Errors: a value out of range (:mod:`negplugins.options`), a usage mistake or any error a user can fix
(:class:`~negplugins.errors.UserError`, a failed download, a full disk, a malformed data file) is printed as one
line, ``negplugins: error: ...``, with exit status 2 (commands that document it exit 1 for an invalid
run or contribution). Anything else is a bug in the suite: one line ``negplugins: internal error: ...``
and exit status 1, or, with ``-v`` (accepted anywhere on the command line), the full traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys

from .errors import UserError
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

#: Modules that add subcommands: each has ``add_commands(commands, runners)``, where ``commands`` are
#: the top-level subparsers and ``runners`` those of ``negplugins search``.
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
    """An ArgumentParser whose usage errors are one line, ``negplugins: error: <command>: <message>``.

    A command with ``--measures`` gets the option's values regrouped first
    (:func:`negplugins.evaluation.commands.regroup_measures`),
    so that ``-m`` before the positionals does not take them.
    """

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


def _quiet_logs() -> None:
    # ir_datasets sets INFO on each of its loggers when it first uses them, so a level on the parent
    # logger would not hold: switch INFO and below off for this process instead.
    logging.disable(logging.INFO)
    import os

    os.environ.setdefault("IR_DATASETS_DL_DISABLE_PBAR", "true")
    from ._compat import jvm

    jvm.quiet_java_logs()  # no "INFO: Using MemorySegmentIndexInput" from Lucene when the JVM starts


#: Whether this process is the ``negplugins`` program (:func:`run`), which ends once a signal's cleanups ran.
_AS_PROGRAM = False


def _terminate(signum, frame):
    note_stop_signal(signal.SIGTERM)  # first: the exception below may be lost in third-party code, the flag is not
    _stopping()
    raise Terminated()


def _interrupt(signum, frame):
    note_stop_signal(signal.SIGINT)
    _stopping()
    raise KeyboardInterrupt


def _stopping() -> None:
    """The command is stopping: a further SIGINT or SIGTERM may not cut its cleanups short (a second Ctrl-C
    landing in a ``finally`` block left a ``.partial`` folder); the process ends as soon as they are done (in
    :func:`run`, which says so to the cleanups: :func:`negplugins.io.interrupts.signal_ends_process`)."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # first: a signal from here on finds the handler that waits
        signal.signal(signum, _already_stopping)
    if _AS_PROGRAM:
        signal_ends_process()


def _already_stopping(signum, frame):
    """A signal while the command is already stopping: nothing more to do."""


def main(argv=None) -> int:
    """Run one command; SIGTERM ends it like Ctrl-C, cleanups included (exit status 143).

    Either signal, from the moment this function starts (building the parser imports the datasets, seconds
    on a slow disk) to its return, ends the command with one line and status 130 or 143, never a traceback,
    and no output put in place after it: also when third-party code swallowed the signal's exception (the
    handlers record the signal, :func:`negplugins.io.interrupts.note_stop_signal`). Once one has come, further
    ones are ignored while the cleanups run; one that comes once the command has ended (while its status is
    returned) changes nothing.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _interruptible(argv)
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    clear_stop_signal()
    signal.signal(signal.SIGTERM, _terminate)
    if previous[signal.SIGINT] is signal.default_int_handler:  # Python's own (not SIG_IGN, as under nohup)
        signal.signal(signal.SIGINT, _interrupt)
    try:
        status = _interruptible(argv)
    finally:
        for signum, handler in previous.items():
            _ended(signal.signal, signum, handler)
        clear_stop_signal()  # the process goes on (a caller of main): its own writes are not this command's
    return status


def run() -> None:
    """The ``negplugins`` program: :func:`main`, then exit with its status.

    Once the status is known SIGINT and SIGTERM are ignored: a signal that came as the command ended would
    otherwise surface while the interpreter unwinds (a ``KeyboardInterrupt`` there ends the process by
    SIGINT, status -2, after the one line was printed).
    """
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
    """End the process with ``status`` without the interpreter's teardown, once the command's cleanups have run.

    The interpreter's teardown can undo the status: CPython 3.11 keeps a flag that a ``KeyboardInterrupt`` went
    unhandled, never cleared once set, even when the command caught the exception, and at exit then restores
    SIGINT's default and sends itself SIGINT (status -2, after the command's line; seen with strace). 1 Ctrl-C in
    10 landing while ``build_parser`` imports the datasets ended so. And Ray's core worker, stopped by a signal
    inside a blocking call, can abort in its own C++ teardown as the interpreter exits: the process then ended by
    SIGABRT (status -6, 1 run in 3 here) after the command had printed its line and removed its partial files. A local Ray is left running by the engine when a signal ends
    the program (:func:`negplugins.runners.ray_cluster.session`): its processes end with this one.
    """
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            _ended(stream.flush)
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            pass
    os._exit(status)


def _ended(call, *args, **kwargs) -> None:
    """``call(*args, **kwargs)`` once the command has ended: a signal processed meanwhile has nothing left to stop."""
    try:
        call(*args, **kwargs)
    except (KeyboardInterrupt, Terminated):
        pass


def _interruptible(argv) -> int:
    """:func:`_main`; a signal that came meanwhile decides the status, whether or not its exception got here."""
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
    if signum == signal.SIGTERM:
        _ended(print, f"{_PROG}: terminated", file=sys.stderr)
        return 143
    _ended(print, f"{_PROG}: interrupted", file=sys.stderr)
    return 130


def _main(argv) -> int:
    from .environment import check_environment

    try:
        check_environment()  # before ir_datasets is imported (building the parser imports it)
        parser = build_parser()
    except UserError as error:
        print(f"{_PROG}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        return _os_error(error, sys.argv[1:] if argv is None else argv, verbose="-v" in (argv or sys.argv))
    args = parser.parse_args(argv)
    from ._compat import jvm

    jvm.reduce_signal_use()  # Ctrl-C and SIGTERM reach Python, whose cleanups run (not the JVM's System.exit)
    if not args.verbose:
        _quiet_logs()
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
        print(f"{_PROG}: error: {error}", file=sys.stderr)
        return 2
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
    named = []
    for value in vars(args).values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and item:
                named.append(item)
    return named


def _os_error(error: OSError, named, verbose: bool) -> int:
    """An ``OSError`` whose cause the user can fix is a user error (status 2); any other is a bug."""
    import os

    from .environment import cache_folders
    from .errors import os_error_message

    message = os_error_message(error, named=named, caches=cache_folders(), workdir=os.getcwd())
    if message is None:
        return _internal_error(verbose)
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return 2


def _one_line(error: BaseException) -> str:
    """The message of ``error`` on one line (a data file's message may quote several)."""
    return " ".join(str(error).split("\n")).strip()


def _stdout_closed() -> bool:
    """Whether standard output is a pipe with no reader; if so, it is pointed at /dev/null so exit is quiet."""
    import os
    import select

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
    import traceback

    error = sys.exc_info()[1]
    if verbose:
        traceback.print_exc()
    elif stop_signal():  # a consequence of the signal (a library half imported when it came): said as such after
        pass
    else:
        print(f"{_PROG}: internal error: {type(error).__name__}: {_one_line(error)} "
              f"(run with -v for the traceback; please report it)", file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    run()
