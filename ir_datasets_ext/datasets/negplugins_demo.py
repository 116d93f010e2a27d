"""A small demo dataset shipped inside the package (``negplugins demo`` needs no network): ExcluIR-style exclusion
queries, NevIR-style negation pairs and BoolQuestions-style AND / OR / NOT questions, with explicit negatives.
"""

import io
import pkgutil
from typing import NamedTuple

from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrel
from ir_datasets.util import PackageDataFile

from ..spec import Benchmark, Breakdown, Data, Measures, Paper, Protocol, register_benchmark
from ..util import (
    Documentation,
    FormatError,
    StoredDocs,
    StreamedQrels,
    StreamedQueries,
    iter_jsonl,
    register,
    require_fields,
)

NAME = "negplugins-demo"

QREL_DEFS = {
    1: "Relevant: satisfies the query, including its exclusion or negation",
    -1: "Explicit negative: on topic, but violates the query's exclusion or negation",
}

KINDS = ("exclusion", "negation-pair", "and", "or", "not")

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="negplugins demo",
    summary="the embedded demo dataset, a mix of all of the above",
    datasets=(NAME,),
    negatives="a document that breaks the query's exclusion, negation or NOT",
    order=99,  # last: a mix of the others
    paper=Paper(reference="negplugins"),
    measures=Measures(names=("nDCG@10", "RR@10", "RightRank@10", "DeltaMRR@10", "PairedAcc", "NegRecall@10"),
                      main="nDCG@10"),
    data=Data(license="apache-2.0"),  # written for the suite, under its licence
    breakdown=Breakdown(subset_field="kind", subsets=KINDS),
    protocol=Protocol(kind="retrieval", depth=100, datasets=(NAME,)),
))



class DemoDoc(NamedTuple):
    doc_id: str
    text: str

    def default_text(self):
        return self.text


class DemoQuery(NamedTuple):
    query_id: str
    text: str
    kind: str  # one of KINDS
    query: str  # = text; the column PyTerrier's get_topics() reads (ir_datasets keeps query_id first, text second)

    def default_text(self):
        return self.text


def iter_docs(streamer):
    with streamer.stream() as stream:
        for line_number, record in iter_jsonl(stream, "negplugins-demo/docs.jsonl"):
            require_fields(record, ("doc_id", "text"), "negplugins-demo/docs.jsonl", line_number)
            yield DemoDoc(record["doc_id"], record["text"])


def iter_queries(streamer):
    source = "negplugins-demo/queries.jsonl"
    with streamer.stream() as stream:
        for line_number, record in iter_jsonl(stream, source):
            require_fields(record, ("query_id", "text", "kind"), source, line_number)
            if record["kind"] not in KINDS:
                raise FormatError(f"{source}:{line_number}: kind {record['kind']!r} is not one of {', '.join(KINDS)}")
            yield DemoQuery(record["query_id"], record["text"], record["kind"], record["text"])


def iter_qrels(streamer):
    with streamer.stream() as stream:
        for line_number, line in enumerate(io.TextIOWrapper(stream, encoding="utf-8"), start=1):
            fields = line.split()
            if len(fields) != 3:
                raise FormatError(f"negplugins-demo/qrels.tsv:{line_number}: expected query_id, doc_id and label")
            yield TrecQrel(fields[0], fields[1], int(fields[2]), "0")


def _init():
    documentation = Documentation(f"docs/{NAME}.yaml")

    def data(name):
        return PackageDataFile(f"etc/{NAME}/{name}", package="ir_datasets_ext")

    docs, queries, qrels = data("docs.jsonl"), data("queries.jsonl"), data("qrels.tsv")
    base = Dataset(StoredDocs(DemoDoc, store=NAME, namespace=NAME, count_hint=36, read=lambda: iter_docs(docs),
                              source_size=lambda: len(pkgutil.get_data("ir_datasets_ext", docs.path()))),
                   StreamedQueries(lambda: iter_queries(queries), DemoQuery, NAME),
                   StreamedQrels(lambda: iter_qrels(qrels), QREL_DEFS), documentation("_"))
    register(NAME, base)
    return base


base = _init()
