"""DuReader-retrieval: Chinese passage retrieval from web search (Qiu et al., EMNLP 2022).

``dureader-retrieval/dev``: Baidu's baseline tarball, 2,000 dev questions over about 8.09M passages (the members it
needs extracted once into the cache); ``dureader-retrieval/dev-100k``: C-MTEB's copy, over 100,001 passages.
"""

import contextlib
import io
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import NamedTuple

import ir_datasets
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrel

from ..disk import check_free_space, give_usual_permissions
from ..download import VerifiedDownload, pinned_download
from ..spec import Benchmark, Data, Measures, Paper, Protocol, read_reported, register_benchmark
from ..util import (
    Documentation,
    FormatError,
    StoredDocs,
    StreamedQrels,
    StreamedQueries,
    iter_json_object_items,
    iter_jsonl,
    register,
    require_fields,
)

NAME = "dureader-retrieval"
BENCHMARK = "dureader_retrieval"  # folder in the cache and the mirror

QREL_DEFS = {1: "Answer paragraph of the question (manually checked for the dev set)"}

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="DuReader-retrieval",
    summary="Chinese passage retrieval from web search",
    datasets=(f"{NAME}/dev", f"{NAME}/dev-100k"),
    language="zh",
    docs="docs/dureader_retrieval.yaml",
    order=5,
    paper=Paper(reference="Qiu et al., EMNLP 2022", url="https://arxiv.org/abs/2203.10232",
                reported=read_reported(NAME), decimals=4),  # the paper prints percentages with two decimals
    # the paper's Recall@k is whether any relevant passage is in the top k: ir_measures' Success@k
    measures=Measures(names=("RR@10", "Success@1", "Success@50"), main="RR@10",
                      paper_names={"RR@10": "MRR@10", "Success@1": "Recall@1", "Success@50": "Recall@50"}),
    # the licence as MTEB's DuRetrieval task declares for its copy of the data (mteb 2.26.24); the tarball's own
    # License.docx was not seen
    data=Data(url="https://github.com/baidu/DuReader/tree/master/DuReader-Retrieval", license="apache-2.0"),
    # the paper's Recall@50, and its cross-encoders rerank the top 50 of the first stage
    protocol=Protocol(kind="retrieval", depth=50, datasets=(f"{NAME}/dev",)),
))


TARBALL = "dureader-retrieval-baseline-dataset.tar.gz"

PARTS = tuple(f"passage-collection/part-0{i}" for i in range(4))
#: Accepted locations (inside the tarball, below at most one leading folder) of each needed member.
MEMBERS = {
    **{part: (part,) for part in PARTS},
    "passage2id.map.json": ("passage-collection/passage2id.map.json", "passage2id.map.json"),
    "dev/dev.json": ("dev/dev.json",),
}

# C-MTEB copy, pinned to the revisions used by mteb; sizes and SHA-256 as published with them.
CMTEB_FILES = {
    "corpus": pinned_download(BENCHMARK, "C-MTEB/DuRetrieval/data/corpus-00000-of-00001-19b9e924cb33e4d5.parquet"),
    "queries": pinned_download(BENCHMARK, "C-MTEB/DuRetrieval/data/queries-00000-of-00001-7c7edb40be6b560c.parquet"),
    "qrels": pinned_download(BENCHMARK, "C-MTEB/DuRetrieval-qrels/data/dev-00000-of-00001-d3c385852a7c0c9d.parquet"),
}


class DuReaderDoc(NamedTuple):
    doc_id: str
    text: str

    def default_text(self):
        return self.text


class DuReaderQuery(NamedTuple):
    query_id: str
    text: str

    def default_text(self):
        return self.text


# -- the official tarball ------------------------------------------------------------------------

def _member_key(name: str) -> str | None:
    """The key of :data:`MEMBERS` a tar member stands for (with or without one leading folder)."""
    name = name.removeprefix("./")
    candidates = (name, name.split("/", 1)[-1])  # the second: without the leading folder
    return next((key for candidate in candidates for key, locations in MEMBERS.items() if candidate in locations),
                None)


@contextlib.contextmanager
def _open_tarball(stream, source: str):
    """The tarball of ``stream`` read as a stream; a file that is no gzip-compressed tar is a FormatError."""
    try:
        with tarfile.open(fileobj=stream, mode="r|gz") as tar:
            yield tar
    except (tarfile.TarError, EOFError, zlib.error) as error:
        raise FormatError(f"{source}: not a readable gzip-compressed tar file ({error})") from None


def _needed_members(tar, source: str):
    """``(key, member)`` for each member of :data:`MEMBERS`, in the tarball's order, until all are found (a
    FormatError where two stand for one key or one is missing)."""
    found, seen = {}, []
    for member in tar:
        if len(seen) < 20:
            seen.append(member.name)
        key = _member_key(member.name)
        if key is None or not member.isfile():
            continue
        if key in found:
            raise FormatError(f"{source}: both {found[key]} and {member.name} stand for {key}")
        found[key] = member.name
        yield key, member
        if len(found) == len(MEMBERS):
            return
    expected = "; ".join(" or ".join(MEMBERS[key]) for key in MEMBERS if key not in found)
    raise FormatError(f"{source}: member(s) not found (directly or below one leading folder): {expected}. "
                      f"First members of the tarball: {', '.join(seen) or 'none'}")


def _check_tarball(path, source: str) -> None:
    """Validate a tarball trusted on first use: it holds every needed member (read up to the last of them), and its
    dev questions read as :func:`iter_dev` reads them (the passages are read when the docstore is built)."""
    with open(path, "rb") as stream, _open_tarball(stream, source) as tar:
        for key, member in _needed_members(tar, source):
            if key == "dev/dev.json":
                with tar.extractfile(member) as dev:  # a few MB; a streamed tar member cannot be read as text
                    text = io.BytesIO(dev.read())
                for _ in _dev_records(text, f"{source}:{member.name}"):
                    pass


_TARBALL = pinned_download(BENCHMARK, TARBALL, validate=_check_tarball)  # no published checksum: trust on first use


class BaselineExtract:
    """The needed members of the baseline tarball, extracted once into ``$IR_DATASETS_HOME``."""

    def __init__(self, tarball):
        self._tarball = tarball

    def directory(self) -> Path:
        return ir_datasets.util.home_path() / BENCHMARK / "baseline"

    def path(self, key: str) -> Path:
        target = self.directory()
        if not target.exists():
            self._extract(target)
        return target / key

    def _extract(self, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="baseline.", suffix=".tmp", dir=target.parent))
        try:
            with self._tarball.stream() as stream, _open_tarball(stream, TARBALL) as tar:
                for key, member in _needed_members(tar, TARBALL):
                    out_path = tmp / key
                    out_path.parent.mkdir(parents=True, exist_ok=True)
                    check_free_space(tmp, member.size, f"{member.name} of {TARBALL}")
                    with tar.extractfile(member) as src, open(out_path, "wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
            give_usual_permissions(tmp, recursive=True)  # mkdtemp makes 0700: shared as ir_datasets' cache
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)


def _passage_ids(map_path: Path):
    """``lookup(line_number)`` over ``passage2id.map.json``, streaming when the keys come in order."""
    source = "passage2id.map.json"
    stack = contextlib.ExitStack()
    items = iter_json_object_items(stack.enter_context(open(map_path, "rb")), source)
    pending = {}

    def lookup(line_number: int, where: str) -> str:
        key = str(line_number)
        if key in pending:
            value = pending.pop(key)
        else:
            for k, value in items:
                if k == key:
                    break
                pending[k] = value
            else:
                raise FormatError(f"{source}: no passage id for line {key} ({where})")
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise FormatError(f"{source}: the id of line {key} is {value!r}, expected a string or integer")
        return str(value)

    def leftover() -> list:
        return list(pending) + [k for k, _ in items]

    return lookup, leftover, stack


def iter_collection(extract: BaselineExtract):
    """The passages of the collection's parts, their ids from ``passage2id.map.json``."""
    lookup, leftover, stack = _passage_ids(extract.path("passage2id.map.json"))
    with stack:
        global_line = 0
        for part in PARTS:
            with open(extract.path(part), "rb") as raw:
                text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
                for line_number, line in enumerate(text, start=1):
                    fields = line.rstrip("\r\n").split("\t")
                    if len(fields) != 4:
                        raise FormatError(
                            f"{part}:{line_number}: expected 4 TAB-separated fields ('-', '', text, '0'), "
                            f"found {len(fields)}")
                    doc_id = lookup(global_line, f"{part}:{line_number}")
                    global_line += 1
                    yield DuReaderDoc(doc_id, fields[2])
        extra = leftover()
        if extra:
            raise FormatError(f"passage2id.map.json: {len(extra)} id(s) for lines beyond the "
                              f"{global_line} passages of the collection (first: {extra[0]!r})")


def iter_dev(extract: BaselineExtract):
    """``(query, paragraph_ids)`` for each line of ``dev/dev.json``."""
    with open(extract.path("dev/dev.json"), "rb") as stream:
        yield from _dev_records(stream, "dev/dev.json")


def _dev_records(stream, source: str):
    """``(query, paragraph_ids)`` for each line of a ``dev/dev.json`` stream."""
    for line_number, record in iter_jsonl(stream, source):
        require_fields(record, ("question_id", "question"), source, line_number, types=(str, int))
        if not isinstance(record["question"], str):
            raise FormatError(f"{source}:{line_number}: field 'question' is "
                              f"{type(record['question']).__name__}, expected str")
        paragraphs = record.get("answer_paragraphs")
        if not isinstance(paragraphs, list):
            raise FormatError(f"{source}:{line_number}: field 'answer_paragraphs' is missing or not a list")
        ids = []
        for i, paragraph in enumerate(paragraphs):
            if not isinstance(paragraph, dict) or isinstance(paragraph.get("paragraph_id"), bool) \
                    or not isinstance(paragraph.get("paragraph_id"), (str, int)):
                raise FormatError(f"{source}:{line_number}: answer_paragraphs[{i}] has no paragraph_id")
            if str(paragraph["paragraph_id"]) not in ids:
                ids.append(str(paragraph["paragraph_id"]))
        yield DuReaderQuery(str(record["question_id"]), record["question"]), ids


def iter_dev_queries(extract: BaselineExtract):
    return (query for query, _ in iter_dev(extract))


def iter_dev_qrels(extract: BaselineExtract):
    for query, ids in iter_dev(extract):
        for doc_id in ids:
            yield TrecQrel(query.query_id, doc_id, 1, "0")


# -- the C-MTEB copy -----------------------------------------------------------------------------

def iter_parquet(download: VerifiedDownload, columns: tuple[str, ...]):
    """Rows of a parquet file as tuples of ``columns``, in batches; clear error if a column is missing."""
    import pyarrow
    import pyarrow.parquet as pq

    path = download.path()  # download errors pass through unchanged
    try:
        parquet = pq.ParquetFile(path)
    except (pyarrow.ArrowException, OSError) as error:  # ArrowInvalid and friends: not a parquet file
        raise FormatError(f"{download.file}: not a readable parquet file ({error})") from error
    found = parquet.schema_arrow.names
    missing = [c for c in columns if c not in found]
    if missing:
        raise FormatError(f"{download.file}: missing column(s) {', '.join(missing)}; expected "
                          f"{', '.join(columns)}, found {', '.join(found)}")
    row = 0
    for batch in parquet.iter_batches(batch_size=8192, columns=list(columns)):
        values = [batch.column(i).to_pylist() for i in range(len(columns))]
        for record in zip(*values):
            if any(v is None for v in record):
                raise FormatError(f"{download.file}: row {row}: null value in {dict(zip(columns, record))}")
            yield row, record
            row += 1


def iter_cmteb_texts(download: VerifiedDownload, cls):
    """The ``cls`` (:class:`DuReaderDoc` or :class:`DuReaderQuery`) of each ``(id, text)`` row of a C-MTEB file."""
    for row, (record_id, text) in iter_parquet(download, ("id", "text")):
        if not isinstance(text, str):
            raise FormatError(f"{download.file}: row {row}: text is {type(text).__name__}, expected str")
        yield cls(str(record_id), text)


def iter_cmteb_qrels(download: VerifiedDownload):
    for row, (qid, pid, score) in iter_parquet(download, ("qid", "pid", "score")):
        try:
            relevance = int(score)
        except (TypeError, ValueError):
            raise FormatError(f"{download.file}: row {row}: score {score!r} is not an integer") from None
        yield TrecQrel(str(qid), str(pid), relevance, "0")


def _init():
    documentation = Documentation("docs/dureader_retrieval.yaml")
    extract = BaselineExtract(_TARBALL)
    collection = StoredDocs(DuReaderDoc, store=f"{BENCHMARK}/docs-full", namespace=NAME, lang="zh",
                            count_hint=8096668, read=lambda: iter_collection(extract),
                            source_size=lambda: sum(extract.path(part).stat().st_size for part in PARTS))
    base = Dataset(collection, documentation("_"))
    register(NAME, base)
    subsets = {
        "dev": Dataset(collection, StreamedQueries(lambda: iter_dev_queries(extract), DuReaderQuery, NAME, "zh"),
                       StreamedQrels(lambda: iter_dev_qrels(extract), QREL_DEFS), documentation("dev")),
        "dev-100k": Dataset(StoredDocs(DuReaderDoc, store=f"{BENCHMARK}/docs-c-mteb", namespace=f"{NAME}/c-mteb",
                                       lang="zh", count_hint=100001,
                                       read=lambda: iter_cmteb_texts(CMTEB_FILES["corpus"], DuReaderDoc)),
                            StreamedQueries(lambda: iter_cmteb_texts(CMTEB_FILES["queries"], DuReaderQuery),
                                            DuReaderQuery, NAME, "zh"),
                            StreamedQrels(lambda: iter_cmteb_qrels(CMTEB_FILES["qrels"]), QREL_DEFS),
                            documentation("dev-100k")),
    }
    for subset, dataset in subsets.items():
        register(f"{NAME}/{subset}", dataset)
    return base, subsets


base, subsets = _init()
