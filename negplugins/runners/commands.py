"""``negplugins search dense``, ``splade``, ``rerank``, ``bm25s``, ``beir-dense`` and ``beir-rerank``: thin layers over
the Python API (docs/runners.md). Every runner names its model ``--model`` (``search dense`` a separate query model
``--query-encoder``) and returns 1000 documents per query (Pyserini's default) unless ``--hits`` says otherwise.
"""

from __future__ import annotations

import os
import sys

from ..io.command_inputs import options_read
from ..options import (
    DEFAULT_HITS,
    FILE_FORCE_HELP,
    FORCE_HELP,
    MAX_BATCH_SIZE,
    MAX_HITS,
    MAX_LENGTH,
    MAX_THREADS,
    add_progress_options,
    bounded_int,
    finite_float,
)
from .dense_options import add_dense_options, add_engine_options, dense_options_from, engine_from
from .model_refs import configure_offline


def _cmd_dense(args) -> int:
    configure_offline()  # before any Hugging Face library is imported
    from .dense import dense_search

    info = dense_search(args.dataset, args.output, model=args.model, index=args.index,
                        **dense_options_from(args))
    for note in info.notes:
        print(f"negplugins: note: {note}", file=sys.stderr)
    if not info.complete:
        missing = ", ".join(str(i) for i in info["shards_missing"])
        print(f"encoded shard {args.shard_id} of {info['shard_num']} into {info['index']}.shards; "
              f"still missing shard(s) {missing}: the run is written once all shards are encoded")
        return 0
    print(f"wrote {info.lines} lines for {info.queries} queries to {args.output} (index {info['index']})")
    return 0


def _cmd_splade(args) -> int:
    configure_offline()
    from .sparse import splade_search

    info = splade_search(args.dataset, args.output, model=args.model, index=args.index, hits=args.hits,
                         batch_size=args.batch_size, max_length=args.max_length,
                         query_max_length=args.query_max_length, quantization=args.quantization,
                         threads=args.threads, rebuild=args.rebuild, encoded_queries=args.encoded_queries,
                         run_tag=args.run_tag, progress=args.progress, device=args.device, force=args.force)
    print(f"wrote {info.lines} lines for {info.queries} queries to {args.output} (impact index {info['index']})")
    if info["empty_queries"]:
        print(f"negplugins: note: {info['empty_queries']} queries have no term of positive weight and no line in "
              f"the run", file=sys.stderr)
    return 0


def _cmd_rerank(args) -> int:
    configure_offline()
    from .rerank import rerank

    info = rerank(args.dataset, args.output, model=args.model, run=args.run, candidates=args.candidates,
                  reranker=args.reranker, top_k=args.top_k, batch_size=args.batch_size,
                  max_length=args.max_length, run_tag=args.run_tag, force=args.force, engine=engine_from(args),
                  index=args.index, progress=args.progress)
    print(f"reranked {info['pairs']} pairs of {info.queries} queries with {info['reranker']} {info['model']}; "
          f"wrote {info.lines} lines to {args.output}")
    for note in info.notes:
        print(f"negplugins: note: {note}", file=sys.stderr)
    return 0


def _cmd_bm25s(args) -> int:
    from .bm25s import bm25s_search

    info = bm25s_search(args.dataset, args.output, k1=args.k1, b=args.b, method=args.method, stemmer=args.stemmer,
                        stopwords=args.stopwords, hits=args.hits, preset=args.preset, run_tag=args.run_tag,
                        force=args.force)
    print(f"wrote {info.lines} lines for {info.queries} queries to {args.output} (bm25s {info['method']} "
          f"k1={info['k1']:g} b={info['b']:g}, stemmer {info['stemmer']}, stop words {info['stopwords']}, "
          f"{info['documents']} documents)")
    if info["empty_queries"]:
        print(f"negplugins: note: {info['empty_queries']} queries have no term in the corpus and no line in the run",
              file=sys.stderr)
    return 0


def _cmd_search_beir_dense(args) -> int:
    configure_offline()
    from .beir import beir_dense_search

    info = beir_dense_search(args.dataset, args.output, model=args.model, hits=args.hits, batch_size=args.batch_size,
                             score_function=args.score_function, max_length=args.max_length, device=args.device,
                             run_tag=args.run_tag, show_progress_bar=args.verbose, force=args.force)
    print(f"wrote {info.lines} lines for {info.queries} queries to {info['output']}")
    return 0


def _cmd_search_beir_rerank(args) -> int:
    configure_offline()
    from .beir import beir_rerank

    info = beir_rerank(args.dataset, args.run, args.output, model=args.model, top_k=args.top_k,
                       batch_size=args.batch_size, max_length=args.max_length, device=args.device,
                       run_tag=args.run_tag, force=args.force)
    print(f"wrote {info.lines} lines for {info.queries} queries to {info['output']}")
    return 0


def _cmd_topics(args) -> int:
    from ..io.topics import default_topics_path, write_topics

    target = args.output if args.output is not None else default_topics_path(args.dataset)
    before = os.stat(target) if os.path.isfile(target) else None
    path, count = write_topics(args.dataset, args.output, force=args.force)
    if before is not None and os.path.samestat(before, os.stat(path)):  # a write is a new file renamed into place
        print(f"{path} already holds these {count} topics; left unchanged")
    else:
        print(f"wrote {count} topics to {path}")
    return 0


def _cmd_index(args) -> int:
    from .lucene_index import lucene_index

    path, built = lucene_index(args.dataset, args.index, threads=args.threads, rebuild=args.rebuild,
                               verbose=args.verbose, slim=args.slim)
    print(f"{'built' if built else 'reusing up-to-date'} {'slim ' if args.slim and built else ''}Lucene index {path}")
    return 0


def _cmd_search_bm25(args) -> int:
    from .bm25 import bm25_search

    info = bm25_search(args.dataset, args.output, index=args.index, k1=args.k1, b=args.b, hits=args.hits,
                       threads=args.threads, batch_size=args.batch_size, run_tag=args.run_tag, force=args.force,
                       progress=args.progress)
    print(f"wrote {info.lines} lines for {info.queries} queries to {args.output}")
    return 0


def add_search_command(commands):
    """Add ``topics``, ``index`` and ``search`` (with its ``bm25`` runner) to the top-level subparsers ``commands``;
    return the subparsers of ``search``, to which :func:`add_commands` and the other packages add their runners."""
    p = commands.add_parser("topics", help="write a Pyserini topic file (qid<TAB>text) for a dataset")
    p.add_argument("dataset", help="registered dataset id, e.g. comlq or comlq/negation")
    p.add_argument("--output", "-o", help="topic file (default: topics/<dataset>.tsv); an existing file is replaced "
                                          "only with --force, unless it already holds exactly these topics")
    p.add_argument("--force", action="store_true", help=FILE_FORCE_HELP)
    p.set_defaults(func=_cmd_topics)

    p = commands.add_parser("index", help="build (or reuse) a Lucene index of a dataset's documents")
    p.add_argument("dataset")
    p.add_argument("--index", help="index folder (default: indexes/lucene/<corpus>)")
    p.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=1,
                   help=f"indexing threads, 1 to {MAX_THREADS} (default: 1)")
    p.add_argument("--rebuild", action="store_true", help="build even if an up-to-date index exists")
    p.add_argument("--slim", action="store_true",
                   help="postings only (no positions, document vectors or raw documents, as Pyserini's slim "
                        "indexes): the same BM25 runs on less disk; phrase queries and RM3 need the full index")
    p.set_defaults(func=_cmd_index)

    search = commands.add_parser("search", help="run a retrieval system over a dataset and write a TREC run")
    runners = search.add_subparsers(dest="runner", required=True, metavar="RUNNER")
    p = runners.add_parser("bm25", help="Lucene BM25 (identical to python -m pyserini.search.lucene --bm25)")
    p.add_argument("dataset")
    p.add_argument("--output", "-o", required=True, help="run file to write, e.g. work/comlq/bm25.trec")
    p.add_argument("--index", help="Lucene index (default: built or reused from the dataset)")
    p.add_argument("--k1", type=finite_float(0), default=0.9,
                   help="BM25 k1, a finite number >= 0 (default: 0.9, as Pyserini)")
    p.add_argument("--b", type=finite_float(0, 1), default=0.4, help="BM25 b, from 0 to 1 (default: 0.4, as Pyserini)")
    p.add_argument("--hits", type=bounded_int(1, MAX_HITS), default=DEFAULT_HITS,
                   help=f"documents per query, 1 to {MAX_HITS} (default: {DEFAULT_HITS}, as Pyserini)")
    p.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=1,
                   help=f"search threads, 1 to {MAX_THREADS} (default: 1)")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE), default=64,
                   help=f"queries per batch search, 1 to {MAX_BATCH_SIZE} (default: 64)")
    p.add_argument("--run-tag", default="Anserini", help="last column of the run (default: Anserini, as Pyserini)")
    add_progress_options(p)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_search_bm25, reads=options_read("index"))

    return runners


def add_commands(commands, runners) -> None:
    """Add ``dense``, ``splade``, ``rerank``, ``bm25s``, ``beir-dense`` and ``beir-rerank`` to ``negplugins search``
    (``commands`` is unused)."""
    # the runner modules' defaults, repeated here so that building the parser imports nothing heavy
    RERANK_DEFAULTS = {"top_k": 100, "batch_size": 32}
    SPLADE_DEFAULTS = {"batch_size": 16, "max_length": 512, "query_max_length": 256, "quantization": 51.2}
    RERANKERS = ("cross-encoder", "monot5", "bi-encoder", "colbert")
    BM25S_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
    BM25S_PRESETS = ("comlq-authors",)

    p = runners.add_parser("dense", help="dense retrieval: encode documents into a faiss index (Pyserini layout) "
                                         "and search it")
    p.add_argument("dataset")
    p.add_argument("--output", "-o", required=True, help="run file to write (.gz is compressed)")
    p.add_argument("--model", help="sentence-transformers / Hugging Face model folder or cached id "
                                   "(default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--index", help="search this existing faiss index folder (default: build or reuse "
                                   "indexes/faiss/<corpus>/<model>)")
    add_dense_options(p)
    p.set_defaults(func=_cmd_dense, reads=options_read("index", "model", "query_encoder"))

    p = runners.add_parser("splade", help="learned sparse retrieval (SPLADE-style masked language model): encode "
                                          "documents into a Lucene impact index and search it")
    p.add_argument("dataset")
    p.add_argument("--output", "-o", required=True, help="run file to write (.gz is compressed)")
    p.add_argument("--model", help="masked language model folder or cached id, e.g. a SPLADE checkpoint (required "
                                   "unless --index is an index built by negplugins)")
    p.add_argument("--index", help="search this existing impact index folder (default: build or reuse "
                                   "indexes/splade/<corpus>/<model>)")
    p.add_argument("--hits", type=bounded_int(1, MAX_HITS), default=DEFAULT_HITS,
                   help=f"documents per query, 1 to {MAX_HITS} (default: {DEFAULT_HITS}, as Pyserini)")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE), default=SPLADE_DEFAULTS["batch_size"],
                   help=f"texts per forward pass, 1 to {MAX_BATCH_SIZE} (default: {SPLADE_DEFAULTS['batch_size']})")
    p.add_argument("--max-length", type=bounded_int(1, MAX_LENGTH),
                   help=f"document tokens kept (default: {SPLADE_DEFAULTS['max_length']}, at most the model's)")
    p.add_argument("--query-max-length", type=bounded_int(1, MAX_LENGTH),
                   help=f"query tokens kept (default: {SPLADE_DEFAULTS['query_max_length']}, as Pyserini's SPLADE "
                        f"query encoder)")
    p.add_argument("--quantization", type=finite_float(0),
                   help=f"integer weights are round(weight x SCALE) (default: the index's, else "
                        f"{SPLADE_DEFAULTS['quantization']}, Pyserini's 256/5)")
    p.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=1,
                   help=f"Anserini indexing and search threads, 1 to {MAX_THREADS} (default: 1)")
    p.add_argument("--encoded-queries", metavar="TOPICS",
                   help="also write the encoded queries as a Pyserini topic file (.tsv, each term repeated weight "
                        "times) for python -m pyserini.search.lucene --impact --min-idf -1")
    p.add_argument("--device", default="cpu", help="torch device of the model: cpu, cuda, cuda:N, mps (default: cpu)")
    p.add_argument("--rebuild", action="store_true", help="encode and index again even if an up-to-date index exists")
    p.add_argument("--run-tag", help="last column of the run (default: splade-<model>; stock Pyserini writes "
                                     "Anserini)")
    add_progress_options(p)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_splade, reads=options_read("index", "model"))

    p = runners.add_parser("rerank", help="rerank the top k of a run (or a dataset's candidates) with a "
                                          "cross-encoder, monoT5, bi-encoder or ColBERT-style model")
    p.add_argument("dataset")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="first-stage TREC run to rerank (.gz accepted)")
    source.add_argument("--candidates", action="store_true",
                        help="rerank the dataset's scoreddocs (e.g. NevIR's document pairs)")
    p.add_argument("--model", required=True, help="Hugging Face model folder or cached id")
    p.add_argument("--reranker", choices=RERANKERS, help="kind of model (default: detected from its config)")
    p.add_argument("--top-k", type=bounded_int(1, MAX_HITS), default=RERANK_DEFAULTS["top_k"],
                   help=f"documents reranked per query, 1 to {MAX_HITS}; the rest are dropped "
                        f"(default: {RERANK_DEFAULTS['top_k']})")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE), default=RERANK_DEFAULTS["batch_size"],
                   help=f"pairs per forward pass, 1 to {MAX_BATCH_SIZE} (default: {RERANK_DEFAULTS['batch_size']})")
    p.add_argument("--max-length", type=bounded_int(1, MAX_LENGTH),
                   help=f"token limit per input, 1 to {MAX_LENGTH} (default: the model's, at most 512; colbert: "
                        "the document length, default the model's doc_maxlen, else 180)")
    p.add_argument("--output", "-o", required=True, help="run file to write (.gz is compressed)")
    p.add_argument("--index", help="bi-encoder: read the passage vectors from this dense index of the same model and "
                                   "encoding settings (Flat) instead of encoding them, which can move a score by one "
                                   "unit of the sixth decimal (default: every document is encoded)")
    p.add_argument("--run-tag", help="last column of the run (default: rerank-<kind>-<model>)")
    add_progress_options(p)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    add_engine_options(p, "score the pairs")
    p.set_defaults(func=_cmd_rerank, reads=options_read("run", "index", "model"))

    p = runners.add_parser("bm25s", help="BM25 with the bm25s package (no Java); --preset comlq-authors is the ComLQ "
                                         "authors' configuration")
    p.add_argument("dataset")
    p.add_argument("--output", "-o", required=True, help="run file to write (.gz is compressed)")
    p.add_argument("--preset", choices=BM25S_PRESETS,
                   help="named configuration; the options below override it (comlq-authors: lucene, k1 1.5, b 0.75, "
                        "stemmer english, stop words en, hits 100, as the authors' llama-index BM25Retriever)")
    p.add_argument("--k1", type=finite_float(0), help="BM25 k1, a finite number >= 0 (default: 1.5, as bm25s)")
    p.add_argument("--b", type=finite_float(0, 1), help="BM25 b, from 0 to 1 (default: 0.75, as bm25s)")
    p.add_argument("--method", choices=BM25S_METHODS, help="bm25s scoring variant (default: lucene, as bm25s)")
    p.add_argument("--stemmer", help="PyStemmer language (english, porter, german, ...) or none (default: none)")
    p.add_argument("--stopwords", help="bm25s stop-word list (en, english_plus, de, fr, ...) or none (default: en)")
    p.add_argument("--hits", type=bounded_int(1, MAX_HITS),
                   help=f"documents per query, 1 to {MAX_HITS} (default: 1000; comlq-authors: 100)")
    p.add_argument("--run-tag", help="last column of the run (default: bm25s-<preset>, or bm25s)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_bm25s)

    p = runners.add_parser("beir-dense", help="BEIR DenseRetrievalExactSearch with a sentence-transformers model")
    p.add_argument("dataset")
    p.add_argument("--output", "-o", required=True, help="run file to write")
    p.add_argument("--model", help="sentence-transformers model folder or cached id (default: the packaged "
                                   "all-MiniLM-L6-v2)")
    p.add_argument("--hits", type=bounded_int(1, MAX_HITS), default=DEFAULT_HITS,
                   help=f"documents per query, 1 to {MAX_HITS} (default: {DEFAULT_HITS}, as Pyserini)")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE), default=128,
                   help=f"texts per forward pass, 1 to {MAX_BATCH_SIZE} (default: 128)")
    p.add_argument("--score-function", choices=("cos_sim", "dot"), default="cos_sim")
    p.add_argument("--max-length", type=bounded_int(1, MAX_LENGTH),
                   help=f"truncate inputs to this many tokens, 1 to {MAX_LENGTH}")
    p.add_argument("--device", help="cpu, cuda, ... (default: chosen by sentence-transformers)")
    p.add_argument("--run-tag", help="last column of the run (default: beir-dense-<model>)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_search_beir_dense, reads=options_read("model"))

    p = runners.add_parser("beir-rerank", help="BEIR Rerank of a first-stage run with a cross-encoder")
    p.add_argument("dataset")
    p.add_argument("--run", required=True, help="first-stage TREC run to rerank")
    p.add_argument("--model", required=True, help="cross-encoder folder or cached id")
    p.add_argument("--output", "-o", required=True, help="run file to write")
    p.add_argument("--top-k", type=bounded_int(1, MAX_HITS), default=100,
                   help=f"first-stage documents reranked per query, 1 to {MAX_HITS} (default: 100)")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE), default=32,
                   help=f"pairs per forward pass, 1 to {MAX_BATCH_SIZE} (default: 32)")
    p.add_argument("--max-length", type=bounded_int(1, MAX_LENGTH),
                   help=f"truncate each pair to this many tokens, 1 to {MAX_LENGTH}")
    p.add_argument("--device", help="cpu, cuda, ... (default: chosen by sentence-transformers)")
    p.add_argument("--run-tag", help="last column of the run (default: beir-rerank-<model>)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_search_beir_rerank, reads=options_read("run", "model"))
