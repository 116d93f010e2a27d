"""The options of ``search dense``, declared once: each field's flag, limit and help make the command line
(:func:`add_dense_options`, :func:`dense_options_from`) and the checks of the Python API's keyword arguments
(:func:`split_options`)."""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field

from ..errors import UserError
from ..options import (
    DEFAULT_HITS,
    FORCE_HELP,
    MAX_BATCH_SIZE,
    MAX_HITS,
    MAX_LENGTH,
    MAX_SHARDS,
    add_progress_options,
    bounded_int,
    check_int,
)
from .encoding_settings import BACKENDS, DTYPES, POOLINGS
from .ray_cluster import MAX_RAY_WORKERS, RayEngine, engine_of

DENSE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 64, "shard_num": 1}
MAX_TRAIN_SAMPLE = 100_000_000


def _option(default, flag: str | None, help: str, *, limit: tuple | None = None, choices: tuple | None = None,
            **argparse_keywords):
    """A field with its command-line flag (``None``: not on the command line), help and limit or choices."""
    return field(default=default, metadata={"flag": flag, "help": help, "limit": limit, "choices": choices,
                                            "argparse": argparse_keywords})


def _check(options, skip: tuple = ()) -> None:
    """Refuse a field outside its declared limit or choices, with one line naming the flag."""
    for f in dataclasses.fields(options):
        value, meta = getattr(options, f.name), f.metadata
        if value is None or f.name in skip:
            continue
        if meta.get("limit"):
            check_int(value, meta["flag"], *meta["limit"])
        elif meta.get("choices") and value not in meta["choices"]:
            raise UserError(f"{meta['flag']} {value}: expected one of {', '.join(meta['choices'])}")


@dataclass(frozen=True)
class EncodingOptions:
    """How passages and queries are encoded; ``None``: the model's own settings (or an existing index's)."""

    query_encoder: str | None = _option(None, "--query-encoder", "a separate query model (DPR-style); passages are "
                                        "encoded by --model (default: --model encodes both)")
    device: str | None = _option(None, "--device", "auto, cpu, cuda, cuda:N or mps (default: auto = cuda when PyTorch "
                                 "sees a GPU, else cpu; onnx and openvino run on the CPU)")
    backend: str | None = _option(None, "--backend", "torch, or an ONNX export run by onnxruntime or OpenVINO, cached "
                                  "beside the index (default: torch, or the --index's)", choices=BACKENDS)
    dtype: str | None = _option(None, "--dtype", "float32; float16/bfloat16 (torch, openvino); int8 (onnx: dynamic "
                                "per-channel quantization; openvino: NNCF static quantization calibrated on the "
                                "corpus's first passages) (default: float32, or the --index's)", choices=DTYPES)
    pooling: str | None = _option(None, "--pooling", "default: the model's sentence-transformers pooling, else mean",
                                  choices=POOLINGS)
    normalize: bool | None = _option(None, "--normalize", "L2-normalise the vectors, so inner product = cosine "
                                     "(default: yes; DPR: --no-normalize)", action=argparse.BooleanOptionalAction)
    max_length: int | None = _option(None, "--max-length", f"token limit per text, 1 to {MAX_LENGTH} (default: the "
                                     "model's max_seq_length)", limit=(1, MAX_LENGTH))
    query_prefix: str | None = _option(None, "--query-prefix", "prepended to every query, e.g. 'query: ' for E5 ('' "
                                       "for none; default: the model's stored prompt 'query', else none)")
    passage_prefix: str | None = _option(None, "--passage-prefix", "prepended to every passage, e.g. 'passage: ' for "
                                         "E5 ('' for none; default: the model's stored prompt 'document'/'passage', "
                                         "else none)")

    def __post_init__(self):
        _check(self)

    def given(self) -> dict:
        """The options set (not ``None``), by name, in the order of the fields."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class IndexOptions:
    """How the documents are encoded into an index (docs/runners.md: shards, index types, the Ray engine)."""

    batch_size: int = _option(DENSE_DEFAULTS["batch_size"], "--batch-size", f"texts per forward pass, 1 to "
                              f"{MAX_BATCH_SIZE} (default: {DENSE_DEFAULTS['batch_size']}; on a GPU larger batches, "
                              f"e.g. 512, fill it better)", limit=(1, MAX_BATCH_SIZE))
    shard_num: int = _option(DENSE_DEFAULTS["shard_num"], "--shard-num", f"split encoding into this many shards, 1 to "
                             f"{MAX_SHARDS}; finished shards are kept and skipped on rerun (with --engine ray too: say "
                             f"one shard per 100,000 documents, so that an interrupted job resumes)",
                             limit=(1, MAX_SHARDS))
    shard_id: int | None = _option(None, "--shard-id", "encode only this shard, 0 to shard-num - 1, as "
                                   "pyserini.encode", limit=(0, MAX_SHARDS - 1))
    rebuild: bool = _option(False, "--rebuild", "encode again even if an up-to-date index exists",
                            action="store_true")
    progress: bool | None = _option(True, None, "")
    index_type: str | None = _option(None, "--index-type", "faiss index factory string, inner product: Flat "
                                     "(default, exact, Pyserini's layout), HNSW32, IVF65536,PQ64, ...; recorded in "
                                     "the index manifest and the run's sidecar", metavar="FACTORY")
    train_sample: int | None = _option(None, "--train-sample", "vectors an index type that needs training (IVF, PQ) "
                                       "is trained on, drawn at random (default: min(documents, 100000))",
                                       limit=(1, MAX_TRAIN_SAMPLE), metavar="N")
    search_shards: bool = _option(False, "--search-shards", "keep the encoded shards as the (Flat) index and search "
                                  "one shard at a time, merging each shard's top hits: exact search with one shard "
                                  "in memory", action="store_true")
    max_index_memory: int | str | None = _option(None, "--max-index-memory", "memory one searched index may take "
                                                 "(512M, 16G, ...): a Flat index over it is kept as shards that fit "
                                                 "(as --search-shards, with --shard-num raised as needed)",
                                                 metavar="SIZE")
    engine: object = _option("single", None, "")  # "single", "ray" or a RayEngine (add_engine_options)

    def __post_init__(self):
        _check(self, skip=("shard_id",))
        if self.shard_id is not None:  # its limit is the shard count
            try:
                check_int(self.shard_id, "--shard-id", 0, self.shard_num - 1)
            except UserError as error:
                raise UserError(f"{error} (for --shard-num {self.shard_num})") from None
        engine_of(self.engine)


@dataclass(frozen=True)
class SearchOptions:
    """How an index is searched and the run written."""

    hits: int = _option(DENSE_DEFAULTS["hits"], "--hits", f"documents per query, 1 to {MAX_HITS} (default: "
                        f"{DENSE_DEFAULTS['hits']}, as Pyserini)", limit=(1, MAX_HITS))
    search_params: str | None = _option(None, "--search-params", "faiss ParameterSpace settings of an approximate "
                                        "index at search time, e.g. nprobe=64 (IVF) or efSearch=128 (HNSW)",
                                        metavar="PARAMS")
    run_tag: str | None = _option(None, "--run-tag", "last column of the run (default: dense-<model>)")
    command: str | None = _option(None, None, "")  # recorded in the sidecar; default: this process's command line
    force: bool = _option(False, "--force", FORCE_HELP, action="store_true")

    def __post_init__(self):
        _check(self)
        check_search_params(self.search_params)


#: faiss search parameters that count something (probes, candidates, a factor): 0 or less makes faiss return
#: one hit per query, silently (``efSearch=0`` on HNSW32: 1 hit of the 5 asked).
POSITIVE_SEARCH_PARAMS = frozenset({"nprobe", "efSearch", "quantizer_efSearch", "k_factor", "k_factor_rf"})


def check_search_params(search_params: str | None) -> None:
    """Refuse ``--search-params`` that are not ``name=number`` pairs, a count below 1, or a name set twice."""
    if not search_params:
        return
    names = set()
    for item in search_params.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not name or number is None or not math.isfinite(number):
            raise UserError(f"--search-params {search_params!r}: {item.strip()!r} is not NAME=NUMBER; e.g. nprobe=64 "
                            f"(IVF) or efSearch=128 (HNSW), several separated by commas")
        if name in names:  # faiss would apply both, the last winning
            raise UserError(f"--search-params {search_params!r}: {name} is set twice; set each parameter once")
        names.add(name)
        if name in POSITIVE_SEARCH_PARAMS and (number < 1 or number != int(number)):
            raise UserError(f"--search-params {search_params!r}: {name} must be a whole number >= 1 (got "
                            f"{value.strip()}; faiss would return one hit per query); e.g. {name}=128")


GROUPS = (EncodingOptions, IndexOptions, SearchOptions)


def split_options(function: str, keywords: dict, groups: tuple = GROUPS) -> tuple:
    """One object of each of ``groups`` from the keyword arguments naming their fields (checked); a keyword that
    none has is a ``TypeError``, as for any function."""
    names = [{f.name for f in dataclasses.fields(group)} for group in groups]
    for name in keywords:
        if not any(name in fields for fields in names):
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    return tuple(group(**{k: v for k, v in keywords.items() if k in fields}) for group, fields in zip(groups, names))


def add_engine_options(parser: argparse.ArgumentParser, work: str) -> None:
    """``--engine``, ``--ray-address`` and ``--ray-workers`` (:func:`engine_from` reads them)."""
    parser.add_argument("--engine", choices=("single", "ray"), default="single",
                        help=f"single: {work} in this process (default); ray: on a Ray cluster, the same output "
                             "(pip install 'negplugins[ray]')")
    parser.add_argument("--ray-address", help="with --engine ray: join this Ray cluster (auto, HOST:6379); default: "
                                              "start a local Ray on this machine")
    parser.add_argument("--ray-workers", type=bounded_int(1, MAX_RAY_WORKERS),
                        help="with --engine ray: model workers (default: one per GPU, else one per node with its CPUs)")


def engine_from(args):
    """The ``engine`` argument of the runners from :func:`add_engine_options`' arguments."""
    if args.engine != "ray":
        given = [option for option, value in (("--ray-address", args.ray_address),
                                              ("--ray-workers", args.ray_workers)) if value is not None]
        if given:
            raise UserError(f"{' and '.join(given)}: only with --engine ray")
        return args.engine
    return RayEngine(address=args.ray_address, workers=args.ray_workers)


def add_dense_options(parser: argparse.ArgumentParser, groups: tuple = GROUPS, leave_out: tuple = ()) -> None:
    """The flags of the fields of ``groups`` but those named in ``leave_out``; with :class:`IndexOptions`,
    ``--progress`` and the engine's options (unless ``progress`` or ``engine`` is left out)."""
    for group in groups:
        for f in dataclasses.fields(group):
            meta = f.metadata
            if meta["flag"] is None or f.name in leave_out:
                continue
            keywords = dict(meta["argparse"], help=meta["help"])
            if meta["limit"]:
                keywords["type"] = bounded_int(*meta["limit"])
            if meta["choices"]:
                keywords["choices"] = meta["choices"]
            if f.default is not None and "action" not in keywords:
                keywords["default"] = f.default
            parser.add_argument(meta["flag"], **keywords)
    if IndexOptions in groups:
        if "progress" not in leave_out:
            add_progress_options(parser)
        if "engine" not in leave_out:
            add_engine_options(parser, "encode the documents")


def dense_options_from(args: argparse.Namespace, groups: tuple = GROUPS, leave_out: tuple = ()) -> dict:
    """The keyword arguments of ``dense_search`` given by the arguments :func:`add_dense_options` added."""
    options = {f.name: getattr(args, f.name) for group in groups for f in dataclasses.fields(group)
               if f.metadata["flag"] is not None and f.name not in leave_out}
    if IndexOptions in groups and "progress" not in leave_out:
        options["progress"] = getattr(args, "progress", None)
    if IndexOptions in groups and "engine" not in leave_out:
        options["engine"] = engine_from(args)
    return options
