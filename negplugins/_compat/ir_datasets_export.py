"""``ir_datasets export`` and ``lookup`` write the ``bool`` fields of the suite's records (ComLQ's ``has_negation``),
as ``true``/``false``, which stock ir_datasets skips. Only the suite's own record types are exported so; every other
record is exported as stock. See docs/stock-tools.md.
"""

from __future__ import annotations

import typing

from . import upstream

__all__ = ["install"]


def _view(data_cls):
    """``(cls, bool field positions)``: a suite record type with its bool fields shown as int; others as they are."""
    module = getattr(data_cls, "__module__", None) or ""
    if module != "ir_datasets_ext" and not module.startswith("ir_datasets_ext."):
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
                record = tuple(("true" if value else "false") if i in self._bools else value
                               for i, value in enumerate(record))
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
    """Put the suite's exporters in ir_datasets' exporter tables (idempotent); False when one has moved."""
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
