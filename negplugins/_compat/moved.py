"""Module paths of earlier releases, kept importable: ``import negplugins.trec`` is ``negplugins.io.trec``.

The suite's modules were grouped into packages (``io``, ``evaluation``, ``runners``, ``_compat``). Code
written against the flat layout keeps working: importing an old path returns the module at its new
path, the very same object (so ``monkeypatch`` of either name patches both), without a copy of the
module or a file at the old path. New code should import the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED", "install"]

#: Old module path -> new module path.
MOVED = {
    "negplugins.trec": "negplugins.io.trec",
    "negplugins.files": "negplugins.io.files",
    "negplugins.outputs": "negplugins.io.outputs",
    "negplugins.inputs": "negplugins.io.inputs",
    "negplugins.jsonfile": "negplugins.io.jsonfile",
    "negplugins.metadata": "negplugins.io.sidecars",
    "negplugins.topics": "negplugins.io.topics",
    "negplugins.validation": "negplugins.evaluation.validation",
    "negplugins.significance": "negplugins.evaluation.significance",
    "negplugins.reports": "negplugins.evaluation.reports",
    "negplugins.index": "negplugins.runners.lucene_index",
    "negplugins.beir.retrieval": "negplugins.runners.beir",
    "negplugins.jvm": "negplugins._compat.jvm",
    "negplugins.plugins": "negplugins._compat.plugins",
    "negplugins.measures.pyterrier_support": "negplugins._compat.pyterrier",
    "negplugins.measures.registration": "negplugins._compat.ir_measures",
}


class _AliasLoader(importlib.abc.Loader):
    """Hands out the module at the new path under the old name, leaving that module untouched."""

    def __init__(self, target: str):
        self.target = target
        self._original_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._original_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has just set ``module.__spec__`` to the alias spec: give the module its own back
        module.__spec__ = self._original_spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and only those) on ``sys.meta_path``."""

    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
