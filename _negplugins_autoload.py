"""Import hook that plugs negplugins into stock ir_datasets, ir_measures and Pyserini.

ir_datasets, ir_measures and Pyserini have no plugin entry points. The installed package ships
``negplugins-autoload.pth``, which imports this module at interpreter start. It only puts a finder on
``sys.meta_path`` (it imports nothing beyond ``os`` and ``sys``, which the interpreter has already
loaded), and acts when one of these packages is first imported:

* ``ir_datasets``: after it has loaded, the suite's datasets are registered (``import ir_datasets_ext``); in
  the ``ir_datasets`` command line, its ``export`` and ``lookup`` also write the fields of a type it skips
  (ComLQ's ``has_negation``, a bool; ``negplugins._compat.ir_datasets_export``);
* ``ir_measures``: after it has loaded, the negation measures are registered (``negplugins.measures``);
* ``pyserini``: before it loads, the Java 21 runtime is configured (``negplugins._compat.jvm``);
* ``pyserini.search``: after it has loaded, ``--topics`` learns the suite's dataset ids (``--topics comlq``), and
  ``pyserini.eval.trec_eval`` takes them as qrels names (``negplugins._compat.pyserini_topics``);
* ``pyterrier``: after it has loaded, ``pt.Experiment`` learns to average the negation measures over the
  queries they are defined on (``negplugins._compat.pyterrier``).

So ``ir_measures comlq run.trec "RightRank@10 nDCG@10"``, ``ir_datasets export comlq queries`` and
``python -m pyserini.search.lucene --topics comlq ...`` work with no extra import. Set ``NEGPLUGINS_AUTOLOAD=0`` to
switch the hook off; the ``negplugins-*`` console scripts then do the same explicitly.

An action that fails does not fail the user's import: the package is imported without the suite, and one
line on stderr names the action and the error. ``NEGPLUGINS_DEBUG=1`` prints the full traceback instead
(the ``.pth`` line does the same when this module itself cannot be imported).
"""

import os
import sys

ENV_VAR = "NEGPLUGINS_AUTOLOAD"
DEBUG_ENV = "NEGPLUGINS_DEBUG"

# module -> (action before it executes, action after it executes): "module:function" calls the function,
# a bare "module" is only imported, None does nothing. Each action imports only what it needs: registering
# the datasets must not pull in ir_measures, nor registering the measures ir_datasets.
_ACTIONS = {
    "ir_datasets": (None, "ir_datasets_ext"),
    "ir_measures": (None, "negplugins._compat.plugins:register_measures"),
    "pyserini": ("negplugins._compat.plugins:configure_java", None),
    "pyserini.search": (None, "negplugins._compat.plugins:pyserini_topic_names"),
    "pyterrier": (None, "negplugins._compat.pyterrier:install"),
}

# package -> action run after it has loaded, only in the process of its own command line (``ir_datasets ...``,
# ``python -m ir_datasets ...``), where importing the rest of the suite costs nothing the user would notice.
_COMMAND_ACTIONS = {
    "ir_datasets": "negplugins._compat.plugins:ir_datasets_command",
}


def _debug():
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _call(action, package):
    """Run ``action``; an error is reported on stderr (traceback with NEGPLUGINS_DEBUG=1), never raised."""
    module_name, _, function = action.partition(":")
    try:
        __import__(module_name)
        if function:
            getattr(sys.modules[module_name], function)()
    except Exception as error:  # the user's import of ``package`` goes on without the suite
        hint = f" (set {DEBUG_ENV}=1 for the traceback)"
        if _debug():
            import traceback

            traceback.print_exception(error, file=sys.stderr)
            hint = ""
        print(f"negplugins: the import hook's {action} for {package} failed, {package} is used without the suite: "
              f"{type(error).__name__}: {error}{hint}", file=sys.stderr)


def main_module(argv=None):
    """The module run as ``python -m MODULE`` (from ``argv``, default ``sys.orig_argv``), else None.

    The one reader of ``-m`` in the suite (``negplugins._compat.jvm.main_module`` is this function); it lives
    here because this module may import nothing beyond ``os`` and ``sys``.
    """
    args = list(getattr(sys, "orig_argv", []) if argv is None else argv)[1:]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-m":
            return args[index + 1] if index + 1 < len(args) else None
        if arg.startswith("-m"):
            return arg[2:]
        if arg in ("-c", "-") or not arg.startswith("-"):
            return None  # a command, stdin or a script: not -m
        index += 2 if arg in ("-W", "-X", "--check-hash-based-pycs") else 1  # an option with a separate value
    return None


def _is_command(package):
    """Whether this process is ``package``'s command line: its console script, or ``python -m package``."""
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script == package or main_module() == package


class _HookedLoader:
    def __init__(self, loader, package, before, after):
        self._loader = loader
        self._package = package
        self._before = before
        self._after = after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        if self._before:
            _call(self._before, self._package)
        self._loader.exec_module(module)
        if self._after:
            _call(self._after, self._package)
        command = _COMMAND_ACTIONS.get(self._package)
        if command and _is_command(self._package):
            _call(command, self._package)

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the wrapped loader
        return getattr(self._loader, name)


class AutoloadFinder:
    """Wraps the loaders of the modules of ``_ACTIONS``; every other import is untouched."""

    def find_spec(self, fullname, path, target=None):
        actions = _ACTIONS.get(fullname)
        if actions is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _HookedLoader(spec.loader, fullname, *actions)
                return spec
        return None


def enabled():
    return os.environ.get(ENV_VAR, "1").strip().lower() not in ("0", "false", "no", "off")


def install():
    """Put the finder on ``sys.meta_path`` (once) unless switched off by ``NEGPLUGINS_AUTOLOAD=0``."""
    if enabled() and not any(isinstance(f, AutoloadFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AutoloadFinder())


install()
