"""Helpers shared by the dataset modules: documentation, strict parsing, docstores."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import pickle
import pkgutil
import struct
from pathlib import Path
from typing import Any, Iterator

import ir_datasets
from ir_datasets.datasets.base import Dataset, FilteredQrels, FilteredQueries, YamlDocumentation
from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, TrecQrel
from ir_datasets.indices import DEFAULT_DOCSTORE_OPTIONS, PickleLz4FullStore
from ir_datasets.util import PackageDataFile
from ir_datasets.util.download import LocalDownload
from ir_datasets.util.metadata import MetadataComponent, MetadataProvider

from .disk import check_free_space

__all__ = ["Documentation", "FormatError", "iter_jsonl", "iter_json_array", "iter_json_object_items", "require_fields",
           "StoredDocs", "file_size", "register", "register_subsets", "register_family_roots", "METADATA",
           "validator"]


class FormatError(ValueError):
    """A source file does not have the documented format; the message names file and position."""


class DamagedCacheError(FormatError):
    """A file the suite built from a dataset (a docstore) was altered or cut short; the message says how to rebuild."""


class Documentation(YamlDocumentation):
    """ir_datasets' YAML documentation, read from this package instead of ``ir_datasets``."""

    def get_key(self, key):
        if not self._contents:
            yaml = ir_datasets.lazy_libs.yaml()
            data = pkgutil.get_data("ir_datasets_ext", self._file)
            self._contents = yaml.load(data, Loader=yaml.BaseLoader)  # only strings, like ir_datasets
        return self._contents.get(key)


def iter_jsonl(stream, source: str) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-empty line of a JSON-lines byte stream (a FormatError names
    ``source:line`` of a line that is not a JSON object)."""
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


def iter_beir_qrels(streamer, source: str) -> Iterator[tuple[int, TrecQrel]]:
    """Yield ``(line_number, qrel)`` for each line of a BEIR qrels file (``query-id<TAB>corpus-id<TAB>score``)."""
    with streamer.stream() as stream:
        lines = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        header = next(lines, "").rstrip("\r\n").split("\t")
        if header != ["query-id", "corpus-id", "score"]:
            raise FormatError(f"{source}:1: expected the header 'query-id<TAB>corpus-id<TAB>score', got {header}")
        for line_number, line in enumerate(lines, start=2):
            fields = line.rstrip("\r\n").split("\t")
            if fields == [""]:
                continue
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                raise FormatError(
                    f"{source}:{line_number}: expected query-id, corpus-id and an integer score, got {line!r}")
            yield line_number, TrecQrel(fields[0], fields[1], int(fields[2]), "0")


def require_fields(record: dict, fields: tuple[str, ...], source: str, position: Any, types=(str,)) -> None:
    """Raise :class:`FormatError` unless ``record`` has every field, each of one of ``types``."""
    for field in fields:
        if field not in record:
            raise FormatError(f"{source}:{position}: missing field {field!r} (expected fields: {', '.join(fields)})")
        if not isinstance(record[field], types):
            expected = " or ".join(t.__name__ for t in types)
            raise FormatError(
                f"{source}:{position}: field {field!r} is {type(record[field]).__name__}, expected {expected}")


def file_size(streamer):
    """``source_size`` of :class:`StoredDocs` read from one verified file (a download, or a release or its copy)."""
    return lambda: streamer.path().stat().st_size


def validator(read):
    """A ``validate`` for :func:`~ir_datasets_ext.download.pinned_download`: ``read(streamer, source)``, a dataset's
    reader, run over the whole file; its :class:`FormatError` names ``source`` and the position."""

    def validate(path, source: str) -> None:
        for _ in read(LocalDownload(path, mkdir=False), source):
            pass

    return validate


#: Docstore bytes per byte of the source file, an upper bound: ir_datasets' lz4 pickles of the synthetic
#: BoolQuestions corpus of ``benchmarks/bench_scale.py`` take 0.93x its ``corpus.jsonl``; lz4 of short
#: passages saves little, and the pickle and the doc id index add per-document bytes.
DOCSTORE_SIZE_RATIO = 1.1
#: Added to every docstore estimate (file system blocks, the lookup index of a small corpus).
DOCSTORE_SIZE_MARGIN = 16 << 20


class _SpaceCheckedStore(PickleLz4FullStore):
    """ir_datasets' docstore, which first checks that its folder's disk has room for the build."""

    def __init__(self, *args, estimate, what, **kwargs):
        super().__init__(*args, **kwargs)
        self._estimate = estimate
        self._what = what

    def build(self):
        needed = None if self.built() else self._estimate()
        if needed is not None:
            check_free_space(Path(self.path), needed, self._what)
        return super().build()

    def get_many_iter(self, keys):
        with self._damage_named():
            yield from super().get_many_iter(keys)

    def __iter__(self):
        with self._damage_named():
            yield from super().__iter__()

    def count(self):
        with self._damage_named():
            return super().count()

    @contextlib.contextmanager
    def _damage_named(self):
        """A docstore whose files were cut short or altered is refused in one line that says how to rebuild it."""
        import lz4.block

        try:
            yield
        except (lz4.block.LZ4BlockError, EOFError, struct.error, pickle.UnpicklingError) as error:
            raise DamagedCacheError(f"{self.path}: {self._what} is damaged ({type(error).__name__}: "
                                    f"{str(error)[:160]}); remove the folder {self.path} and it is built again from "
                                    f"the dataset's files on the next use") from None


class StreamedQueries(BaseQueries):
    """Queries of type ``cls`` that ``read()`` yields afresh on each pass."""

    def __init__(self, read, cls, namespace: str, lang: str = "en"):
        super().__init__()
        self._read, self._cls, self._namespace, self._lang = read, cls, namespace, lang

    def queries_iter(self):
        return iter(self._read())

    def queries_cls(self):
        return self._cls

    def queries_namespace(self):
        return self._namespace

    def queries_lang(self):
        return self._lang


class StreamedQrels(BaseQrels):
    """The TREC qrels that ``read()`` yields afresh on each pass; ``defs``: what each label means."""

    def __init__(self, read, defs: dict):
        self._read, self._defs = read, defs

    def qrels_iter(self):
        return iter(self._read())

    def qrels_cls(self):
        return TrecQrel

    def qrels_defs(self):
        return self._defs


class StoredDocs(BaseDocs):
    """The documents of one corpus, streamed by ``read()`` and looked up through a docstore in
    ``$IR_DATASETS_HOME/<store>/``, built on the first lookup once its disk has room for about ``source_size()`` (the
    bytes the documents are read from, where known); ``count_hint`` feeds the progress bar of that build."""

    def __init__(self, docs_cls, store: str, namespace: str, lang: str = "en", count_hint: int | None = None,
                 read=None, source_size=None):
        super().__init__()
        self._docs_cls = docs_cls
        self._store = store
        self._namespace = namespace
        self._lang = lang
        self._count_hint = count_hint
        self._read = read
        self._source_size = source_size

    @ir_datasets.util.use_docstore
    def docs_iter(self):
        return iter(self._read())

    def docs_cls(self):
        return self._docs_cls

    def docs_source_size(self) -> int | None:
        return None if self._source_size is None else self._source_size()

    def _docstore_estimate(self) -> int | None:
        size = self.docs_source_size()
        return None if size is None else int(size * DOCSTORE_SIZE_RATIO) + DOCSTORE_SIZE_MARGIN

    def docs_store(self, field="doc_id", options=DEFAULT_DOCSTORE_OPTIONS):
        return _SpaceCheckedStore(
            path=f"{ir_datasets.util.home_path() / self._store}/docs.pklz4",
            init_iter_fn=self.docs_iter,
            data_cls=self._docs_cls,
            lookup_field="doc_id",
            index_fields=["doc_id"],
            count_hint=self._count_hint,
            options=options,
            estimate=self._docstore_estimate,
            what=f"the docstore of {self._namespace}",
        )

    def docs_count(self):
        store = self.docs_store()
        return store.count() if store.built() else None

    def docs_namespace(self):
        return self._namespace

    def docs_lang(self):
        return self._lang


# -- streaming parsers for single large JSON documents (ExcluIR, BoolQuestions, DuReader) -----

class _JsonScanner:
    """Incremental reader of one JSON document from a byte stream, holding only the value being decoded."""

    def __init__(self, stream, source: str, chunk_size: int = 1 << 20):
        self._text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        self._source = source
        self._chunk = chunk_size
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._line = 1  # line number of self._buf[self._counted]
        self._counted = 0
        self._decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self._eof:
            return False
        data = self._text.read(self._chunk)
        if not data:
            self._eof = True
            return False
        self._line += self._buf.count("\n", self._counted, self._pos)
        self._buf = self._buf[self._pos:] + data
        self._pos = self._counted = 0
        return True

    def where(self) -> str:
        self._line += self._buf.count("\n", self._counted, self._pos)
        self._counted = self._pos
        return f"{self._source}:{self._line}"

    def error(self, message: str) -> FormatError:
        return FormatError(f"{self.where()}: {message}")

    def peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in " \t\r\n\ufeff":
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return ""

    def expect(self, chars: str, what: str) -> str:
        char = self.peek()
        if not char or char not in chars:
            found = repr(char) if char else "the end of the file"
            raise self.error(f"expected {what}, found {found}")
        self._pos += 1
        return char

    def value(self, what: str = "a JSON value"):
        self.peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as error:
                if self._fill():
                    continue
                raise self.error(f"not valid JSON where {what} was expected ({error.msg})") from None
            if end >= len(self._buf) and not self._eof and self._fill():
                continue  # a number may go on in the next chunk: decode again with more text
            self._pos = end
            return value


def iter_json_array(stream, source: str) -> Iterator[tuple[str, int, Any]]:
    """Yield ``("<source>:<line>", index, element)`` for each element of a JSON array, streaming."""
    scanner = _JsonScanner(stream, source)
    scanner.expect("[", "a JSON array ('[')")
    if scanner.peek() == "]":
        scanner.expect("]", "']'")
    else:
        for index in itertools.count():
            scanner.peek()  # skip the whitespace before the element
            yield scanner.where(), index, scanner.value(f"array element {index}")
            if scanner.expect(",]", f"',' or ']' after array element {index}") == "]":
                break
    if scanner.peek():
        raise scanner.error("unexpected text after the end of the JSON array")


def iter_json_object_items(stream, source: str) -> Iterator[tuple[str, Any]]:
    """Yield ``(key, value)`` for each member of one JSON object, streaming, in file order."""
    scanner = _JsonScanner(stream, source)
    scanner.expect("{", "a JSON object ('{')")
    if scanner.peek() == "}":
        scanner.expect("}", "'}'")
    else:
        while True:
            if scanner.peek() != '"':
                raise scanner.error("expected a string key")
            key = scanner.value("a key")
            scanner.expect(":", f"':' after key {key!r}")
            yield key, scanner.value(f"the value of key {key!r}")
            if scanner.expect(",}", f"',' or '}}' after the value of key {key!r}") == "}":
                break
    if scanner.peek():
        raise scanner.error("unexpected text after the end of the JSON object")


#: Counts of the suite's datasets (``etc/metadata.json``, as ir_datasets keeps its own), answered before anything is
#: downloaded: counted from the real files or stated by the paper; another answers ``None`` until the docstore is built.
METADATA = MetadataProvider(MetadataProvider.json_loader(PackageDataFile("etc/metadata.json", package="ir_datasets_ext")))


def register(dataset_id: str, dataset) -> None:
    """Register ``dataset`` with ir_datasets under ``dataset_id``, with the suite's metadata."""
    ir_datasets.registry.register(dataset_id, Dataset(MetadataComponent(dataset_id, dataset, METADATA), dataset))


def register_subsets(family: str, docs, queries, qrels, documentation, qids_of, groups: dict,
                     filtered_qrels=FilteredQrels) -> dict:
    """Register ``<family>/<subset>`` for each ``{subset: key}`` of ``groups``: the queries ``qids_of(key)`` names,
    their qrels, and ``documentation(subset)``; returns the subsets."""
    subsets = {}
    for subset, key in groups.items():
        lazy_qids = functools.partial(qids_of, key)
        subsets[subset] = Dataset(docs, FilteredQueries(queries, lazy_qids), filtered_qrels(qrels, lazy_qids),
                                  documentation(subset))
        register(f"{family}/{subset}", subsets[subset])
    return subsets


def register_family_roots(specs) -> None:
    """Register each benchmark's bare family id where its module registered none, as an entry holding its docs
    YAML's ``_`` entry only (as ir_datasets' ``beir``: a family of several corpora)."""
    for spec in specs:
        if spec.name not in ir_datasets.registry:
            register(spec.name, Dataset(Documentation(spec.docs)("_")))
