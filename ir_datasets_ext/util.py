"""Helpers shared by the dataset modules: documentation, strict parsing, docstores."""

from __future__ import annotations

import io
import json
import pkgutil
from typing import Any, Callable, Iterator

import ir_datasets
from ir_datasets.datasets.base import YamlDocumentation
from ir_datasets.indices import DEFAULT_DOCSTORE_OPTIONS, PickleLz4FullStore

__all__ = ["Documentation", "FormatError", "iter_jsonl", "require_fields", "docstore"]


class FormatError(ValueError):
    """A source file does not have the documented format; the message names file and position."""


class Documentation(YamlDocumentation):
    """ir_datasets' YAML documentation, read from this package instead of ``ir_datasets``."""

    def get_key(self, key):
        if not self._contents:
            yaml = ir_datasets.lazy_libs.yaml()
            data = pkgutil.get_data("ir_datasets_ext", self._file)
            self._contents = yaml.load(data, Loader=yaml.BaseLoader)  # only strings, like ir_datasets
        return self._contents.get(key)


def iter_jsonl(stream, source: str) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-empty line of a JSON-lines byte stream.

    Raises
    ------
    FormatError
        A line that is not a JSON object, with ``source:line`` in the message.
    """
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    for line_number, line in enumerate(text, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise FormatError(f"{source}:{line_number}: not valid JSON ({error.msg}, column {error.colno})") from None
        if not isinstance(record, dict):
            raise FormatError(f"{source}:{line_number}: expected a JSON object, got {type(record).__name__}")
        yield line_number, record


def require_fields(record: dict, fields: tuple[str, ...], source: str, position: Any, types=(str,)) -> None:
    """Raise :class:`FormatError` unless ``record`` has every field, each of one of ``types``."""
    for field in fields:
        if field not in record:
            raise FormatError(f"{source}:{position}: missing field {field!r} (expected fields: {', '.join(fields)})")
        if not isinstance(record[field], types):
            expected = " or ".join(t.__name__ for t in types)
            raise FormatError(
                f"{source}:{position}: field {field!r} is {type(record[field]).__name__}, expected {expected}")


def docstore(name: str, init_iter_fn: Callable, data_cls, count_hint=None,
             options=DEFAULT_DOCSTORE_OPTIONS) -> PickleLz4FullStore:
    """A random-access docstore under ``$IR_DATASETS_HOME/<name>/docs.pklz4``, built on first use."""
    return PickleLz4FullStore(
        path=f"{ir_datasets.util.home_path() / name}/docs.pklz4",
        init_iter_fn=init_iter_fn,
        data_cls=data_cls,
        lookup_field="doc_id",
        index_fields=["doc_id"],
        count_hint=count_hint,
        options=options,
    )
