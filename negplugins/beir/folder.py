"""A strict reader of BEIR folders: it reads the files as BEIR's ``GenericDataLoader`` does, but stops at the
first problem (a missing ``_id``, a blank line, an unknown query) with ``file:line`` in the message."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

__all__ = ["BeirFolder", "BeirFormatError", "read_beir_folder", "QRELS_HEADER"]

#: The header line of BEIR qrels files.
QRELS_HEADER = ("query-id", "corpus-id", "score")


class BeirFormatError(UserError):
    """A BEIR folder is missing a file or has a malformed line; the message names file and line."""


@dataclass
class BeirFolder:
    """The contents of a BEIR folder, in BEIR's own shapes; ``queries`` holds every line, judged or not."""

    path: Path
    split: str
    corpus: dict[str, dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    query_metadata: dict[str, dict] = field(default_factory=dict)

    @property
    def judged_queries(self) -> dict[str, str]:
        """``{query_id: text}`` of the queries with judgements: what ``GenericDataLoader.load`` returns."""
        return {query_id: self.queries[query_id] for query_id in self.qrels}

    def counts(self) -> dict[str, int]:
        """Documents, queries, judged queries and qrels rows (by label)."""
        labels = Counter(str(label) for docs in self.qrels.values() for label in docs.values())
        return {"docs": len(self.corpus), "queries": len(self.queries), "judged_queries": len(self.qrels),
                "qrels": sum(labels.values()), **{f"qrels_label_{k}": v for k, v in sorted(labels.items())}}


def _missing(path: Path) -> BeirFormatError:
    return BeirFormatError(f"{path}: file not found (a BEIR folder holds corpus.jsonl, queries.jsonl and "
                           f"qrels/<split>.tsv)")


def _lines(path: Path):
    """``(line_number, line)`` of a UTF-8 text file; a missing or undecodable file is a BeirFormatError."""
    if not path.is_file():
        raise _missing(path)
    line_number = 0
    try:
        with open(path, encoding="utf-8", newline="") as f:
            for line_number, line in enumerate(f, start=1):
                yield line_number, line
    except UnicodeDecodeError as error:
        raise BeirFormatError(f"{path}:{line_number + 1}: not UTF-8 ({error.reason})") from None
    except OSError as error:
        raise BeirFormatError(f"{path}: cannot read ({error})") from None


def _json_records(path: Path, kind: str):
    """``(line, id, record)`` of each JSON object of a ``.jsonl`` file, the ``_id`` checked non-empty and unique."""
    first_line: dict[str, int] = {}
    for line_number, line in _lines(path):
        if not line.strip():
            raise BeirFormatError(f"{path}:{line_number}: blank line (BEIR's loader fails on it)")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise BeirFormatError(f"{path}:{line_number}: not valid JSON ({error.msg}, column {error.colno})") from None
        if not isinstance(record, dict):
            raise BeirFormatError(f"{path}:{line_number}: expected a JSON object, got {type(record).__name__}")
        record_id = _string_field(record, "_id", path, line_number)
        if not record_id:
            raise BeirFormatError(f"{path}:{line_number}: empty '_id'")
        if record_id in first_line:
            raise BeirFormatError(f"{path}:{line_number}: duplicate {kind} id {record_id!r} "
                                  f"(first on line {first_line[record_id]})")
        first_line[record_id] = line_number
        yield line_number, record_id, record
    if not first_line:
        raise BeirFormatError(f"{path}: no {'queries' if kind == 'query' else 'documents'}")


def _string_field(record: dict, name: str, path: Path, line_number: int, required: bool = True) -> str:
    if name not in record:
        if required:
            raise BeirFormatError(f"{path}:{line_number}: missing field {name!r}")
        return ""
    value = record[name]
    if not isinstance(value, str):
        raise BeirFormatError(f"{path}:{line_number}: field {name!r} must be a string, got "
                              f"{type(value).__name__} {json.dumps(value)[:40]}")
    return value


def _read_corpus(path: Path) -> dict[str, dict[str, str]]:
    return {doc_id: {"text": _string_field(record, "text", path, line_number),
                     "title": _string_field(record, "title", path, line_number, required=False)}
            for line_number, doc_id, record in _json_records(path, "document")}


def _read_queries(path: Path) -> tuple[dict[str, str], dict[str, dict]]:
    queries: dict[str, str] = {}
    metadata: dict[str, dict] = {}
    for line_number, query_id, record in _json_records(path, "query"):
        queries[query_id] = _string_field(record, "text", path, line_number)
        if "metadata" in record:
            if not isinstance(record["metadata"], dict):
                raise BeirFormatError(f"{path}:{line_number}: field 'metadata' must be a JSON object")
            metadata[query_id] = record["metadata"]
    return queries, metadata


def _is_integer(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _read_qrels(path: Path, queries: dict, corpus: dict, require_docs: bool) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise _missing(path)
    qrels: dict[str, dict[str, int]] = {}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            # The same reader as BEIR's GenericDataLoader._load_qrels, so ids parse identically.
            reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
            header = next(reader, None)
            if header is None:
                raise BeirFormatError(f"{path}: empty file (expected the header "
                                      f"'query-id<TAB>corpus-id<TAB>score')")
            if len(header) == 3 and _is_integer(header[2]):
                raise BeirFormatError(f"{path}:1: missing header line 'query-id<TAB>corpus-id<TAB>score' "
                                      f"(BEIR's loader skips the first line, so this judgement would be lost)")
            if len(header) != 3:
                raise BeirFormatError(f"{path}:1: expected the header 'query-id<TAB>corpus-id<TAB>score', "
                                      f"got {header}")
            for row in reader:
                line_number = reader.line_num
                if len(row) != 3:
                    raise BeirFormatError(f"{path}:{line_number}: expected 3 tab-separated fields query-id, "
                                          f"corpus-id and score, got {len(row)}: {row!r:.80}")
                query_id, doc_id, score = row
                if not _is_integer(score):
                    raise BeirFormatError(f"{path}:{line_number}: score {score!r} is not an integer")
                if query_id not in queries:
                    raise BeirFormatError(f"{path}:{line_number}: query id {query_id!r} is not in queries.jsonl")
                if require_docs and doc_id not in corpus:
                    raise BeirFormatError(f"{path}:{line_number}: corpus id {doc_id!r} is not in corpus.jsonl")
                judged = qrels.setdefault(query_id, {})
                if doc_id in judged:
                    raise BeirFormatError(f"{path}:{line_number}: second judgement of query {query_id!r}, "
                                          f"document {doc_id!r}")
                judged[doc_id] = int(score)
    except UnicodeDecodeError as error:
        raise BeirFormatError(f"{path}: not UTF-8 ({error.reason})") from None
    except csv.Error as error:
        raise BeirFormatError(f"{path}: malformed TSV ({error})") from None
    except OSError as error:
        raise BeirFormatError(f"{path}: cannot read ({error})") from None
    if not qrels:
        raise BeirFormatError(f"{path}: no judgements after the header")
    return qrels


def read_beir_folder(directory: str | os.PathLike, split: str = "test", require_docs: bool = True) -> BeirFolder:
    """Read and check a BEIR folder; with ``require_docs``, every judged document must be in the corpus."""
    root = Path(directory)
    if not root.is_dir():
        raise BeirFormatError(f"{root}: BEIR folder not found")
    corpus = _read_corpus(root / "corpus.jsonl")
    queries, metadata = _read_queries(root / "queries.jsonl")
    qrels = _read_qrels(root / "qrels" / f"{split}.tsv", queries, corpus, require_docs)
    return BeirFolder(path=root, split=split, corpus=corpus, queries=queries, qrels=qrels, query_metadata=metadata)
