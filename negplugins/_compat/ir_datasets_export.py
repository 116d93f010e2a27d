"""``ir_datasets export`` and ``lookup`` write every field of the suite's records, ``bool`` ones included.

ir_datasets' TSV and JSONL exporters (``ir_datasets/commands/export.py``) keep a field only when its annotation
is ``str``, ``int`` or ``float`` (or a tuple of them), and skip any other with an INFO line ("Skipping the
following fields due to unsupported data types"). ComLQ's queries carry ``has_negation: bool``, so
``ir_datasets export comlq queries`` dropped it. :func:`install` puts, in ir_datasets' exporter tables
(``DEFAULT_EXPORTERS``, ``QRELS_EXPORTERS``, ``SCOREDDOCS_EXPORTERS``), subclasses of the two exporters that
show them a ``bool`` field as an ``int`` one. The values are written as:

* TSV: ``true`` or ``false`` (ir_datasets writes ``str(value)``, which would give ``True``);
* JSONL: ``true`` or ``false``, JSON's booleans (``json.dump`` of the bool itself).

The records themselves are unchanged: ``has_negation`` stays a ``bool`` for Python users. Only the suite's own
record types (defined in :mod:`ir_datasets_ext`) are exported this way: a bool field of one of ir_datasets' own
datasets (``aol-ia``'s ``clicked``, ``touche-image``'s ``visible``, ...) is skipped exactly as stock ir_datasets
skips it, and any field of another type is handled by ir_datasets as before.

:mod:`_negplugins_autoload` calls :func:`install` in the ``ir_datasets`` command line (``ir_datasets ...``,
``python -m ir_datasets ...``); ``negplugins-ir_datasets`` does it too. ir_datasets' internals used here are
checked first (:func:`negplugins._compat.upstream.check`).
"""

from __future__ import annotations

import typing

from . import upstream

__all__ = ["install", "exported_value"]


def exported_value(value):
    """What the TSV export writes for ``value``: ``true``/``false`` for a bool, else ``value`` unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _is_suite_record(data_cls) -> bool:
    """Whether ``data_cls`` is a record type of the suite's datasets (defined in a module of ir_datasets_ext)."""
    module = getattr(data_cls, "__module__", None) or ""
    return module == "ir_datasets_ext" or module.startswith("ir_datasets_ext.")


def _view(data_cls):
    """``(cls, bool field positions)``: ``data_cls`` as the exporters should judge it, a bool field shown as int.

    A record type that is not the suite's is returned as it is, for ir_datasets to export as stock.
    """
    if not _is_suite_record(data_cls):
        return data_cls, ()
    annotations = getattr(data_cls, "__annotations__", None)
    fields = getattr(data_cls, "_fields", None)
    if not annotations or not fields or any(field not in annotations for field in fields):
        return data_cls, ()
    positions = tuple(i for i, field in enumerate(fields) if annotations[field] is bool)
    if not positions:
        return data_cls, ()
    view = typing.NamedTuple(data_cls.__name__, [(f, int if annotations[f] is bool else annotations[f]) for f in fields])
    return view, positions


def _exporters():
    from ir_datasets.commands import export

    class TsvExporter(export.TsvExporter):
        """ir_datasets' TSV exporter; a bool field is written ``true``/``false``."""

        def __init__(self, data_cls, out, fields=None):
            view, self._bools = _view(data_cls)
            super().__init__(view, out, fields)
            self.data_cls = data_cls

        def next(self, record):
            if self._bools:
                record = tuple(exported_value(value) if i in self._bools else value for i, value in enumerate(record))
            super().next(record)

    class JsonlExporter(export.JsonlExporter):
        """ir_datasets' JSONL exporter; a bool field is written as JSON's ``true``/``false``."""

        def __init__(self, data_cls, out, fields=None):
            view, _ = _view(data_cls)
            super().__init__(view, out, fields)
            self.data_cls = data_cls

    TsvExporter._negplugins = JsonlExporter._negplugins = True  # type: ignore[attr-defined]
    return {export.TsvExporter: TsvExporter, export.JsonlExporter: JsonlExporter}


def install() -> bool:
    """Put the suite's exporters in ir_datasets' exporter tables; idempotent.

    Returns
    -------
    bool
        Whether they are in place (False when an ir_datasets internal they need has moved).

    Warns
    -----
    UpstreamChangedWarning
        When ir_datasets' exporter classes or tables are not where they were: bool fields are then skipped by
        ``ir_datasets export`` as before.
    """
    if upstream.check("ir_datasets.commands.export"):
        return False
    from ir_datasets.commands import export

    replacements = None
    for table in (export.DEFAULT_EXPORTERS, export.QRELS_EXPORTERS, export.SCOREDDOCS_EXPORTERS):
        for name, exporter in list(table.items()):
            if getattr(exporter, "_negplugins", False):
                continue
            replacements = replacements or _exporters()
            if exporter in replacements:
                table[name] = replacements[exporter]
    return True
