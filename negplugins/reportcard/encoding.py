"""The encoding, index and engine options of ``search dense`` as ``negplugins benchmark`` takes them: declared by
:mod:`negplugins.runners.dense_options`, checked before any work, recorded with the results (docs/report-card.md).
"""

from __future__ import annotations

import dataclasses

from ..errors import UserError

#: Options of ``search dense`` the report card does not offer: the protocols fix the depth and the run tag, the
#: card scores one model and needs every shard, and it has its own --batch-size, --no-progress and --force.
LEFT_OUT = ("query_encoder", "shard_id", "batch_size", "progress", "hits", "run_tag", "force")
#: The options that also apply with --reranker (as ``search rerank`` takes them).
RERANK_OPTIONS = ("max_length", "engine")
#: The defaults of the options that are not ``None`` by default.
_DEFAULTS = {"shard_num": 1, "rebuild": False, "search_shards": False, "engine": "single"}


def add_card_options(parser) -> None:
    from ..runners.dense_options import add_dense_options

    add_dense_options(parser, leave_out=LEFT_OUT)


def card_options_from(args) -> dict:
    """The options given on the command line (those left at their default are left out)."""
    from ..runners.dense_options import dense_options_from

    return given(dense_options_from(args, leave_out=LEFT_OUT))


def given(options: dict | None) -> dict:
    return {k: v for k, v in (options or {}).items() if v is not None and _DEFAULTS.get(k, None) != v}


def _flag(name: str) -> str:
    from ..runners.dense_options import GROUPS

    for group in GROUPS:
        for f in dataclasses.fields(group):
            if f.name == name:
                return f.metadata["flag"] or name
    return "--" + name.replace("_", "-")


def check_options(options: dict, reranker: str | None, model_object: bool) -> None:
    """One line naming the option when it cannot be used, before any work: its limits and choices, the backend's
    dtypes, the device, Ray, and options that do not apply to a reranker or a model object."""
    from ..runners.dense_options import EncodingOptions, IndexOptions, SearchOptions, split_options
    from ..runners.encoding_settings import check_backend_dtype, resolve_device

    unknown = [name for name in options if name in LEFT_OUT]
    if unknown:
        raise UserError(f"{_flag(unknown[0])}: not an option of negplugins benchmark (each protocol fixes it)")
    if reranker is not None:
        for name in options:
            if name not in RERANK_OPTIONS:
                why = ("reads each query and passage together, with no prefix" if name.endswith("prefix")
                       and reranker != "bi-encoder" else "is used as a reranker, with search rerank's options")
                raise UserError(f"{_flag(name)}: --reranker {reranker}: the model {why}; leave {_flag(name)} out")
    encoding, index, _ = split_options("run_benchmark", {k: v for k, v in options.items()},
                                       (EncodingOptions, IndexOptions, SearchOptions))
    if model_object and (encoding.given() or index.engine != "single"):
        name = next(iter(encoding.given()), "engine")
        raise UserError(f"{_flag(name)}: a model object is encoded as it is loaded; save it to a folder and give "
                        f"the folder to choose its encoding")
    backend = encoding.backend or "torch"
    check_backend_dtype(backend, encoding.dtype or "float32")
    if encoding.device is not None:
        resolve_device(encoding.device, backend)
    if index.engine != "single":
        from ..runners.ray_cluster import import_ray

        import_ray()


def own_encoder(ref, options: dict) -> bool:
    """Whether the model is encoded by ``search dense``'s encoder (an encoding option given, Ray, or a model that
    stores prompts) rather than by sentence-transformers as it is."""
    from ..runners.dense_options import EncodingOptions
    from ..runners.encoding_settings import model_defaults

    names = {f.name for f in dataclasses.fields(EncodingOptions)}
    if any(name in names for name in options) or options.get("engine", "single") != "single":
        return True
    if ref.path is None:
        return False
    defaults = model_defaults(ref)
    return bool(defaults.query_prefix or defaults.passage_prefix)


def passage_settings(ref, options: dict) -> dict:
    """The passage encoding of ``search dense`` for these options (the model's own where not given)."""
    from ..runners.encoding_settings import encoder_settings

    return encoder_settings(ref, prefix=options.get("passage_prefix"), role="passage",
                            pooling=options.get("pooling"), normalize=options.get("normalize"),
                            max_length=options.get("max_length"), backend=options.get("backend") or "torch",
                            dtype=options.get("dtype") or "float32")


def query_prefix(ref, options: dict) -> str:
    from ..runners.encoding_settings import model_defaults

    given_prefix = options.get("query_prefix")
    return model_defaults(ref).query_prefix if given_prefix is None else given_prefix


def encoding_record(ref, options: dict) -> dict | None:
    """What the summary, the report and the MTEB model metadata record of the encoding and the index: ``None`` for
    sentence-transformers with no option given."""
    from ..runners.ray_cluster import describe

    if not own_encoder(ref, options):
        if not options:
            return None
        record = {"encoder": "sentence-transformers"}
    else:
        settings = passage_settings(ref, options)
        record = {"encoder": "search dense", "backend": settings["backend"], "dtype": settings["dtype"],
                  "pooling": settings["pooling"], "normalize": settings["normalize"],
                  "max_length": settings["max_length"], "query_prefix": query_prefix(ref, options),
                  "passage_prefix": settings["prefix"]}
    for name in ("device", "index_type", "train_sample", "search_params", "max_index_memory", "shard_num",
                 "search_shards"):
        if name in options:
            record[name] = options[name]
    record["engine"] = describe(options.get("engine", "single"))
    return record


def used_options(ref, reranker: str | None, options: dict) -> dict | None:
    """The summary's record of the options used (:func:`encoding_record`; for a reranker, those given)."""
    if reranker is None:
        return encoding_record(ref, options)
    if not options:
        return None
    from ..runners.ray_cluster import describe

    return {k: describe(v) if k == "engine" else v for k, v in options.items()}


def describe_record(record: dict) -> str:
    """One line for the report: how the model was encoded."""
    if "encoder" not in record:  # a reranker's options
        return "with " + ", ".join(f"{_flag(k)} {v['name'] if k == 'engine' else v}" for k, v in record.items())
    if record["encoder"] == "sentence-transformers":
        line = "encoded by sentence-transformers as the model is"
    else:
        line = (f"encoded by search dense: {record['backend']} {record['dtype']}, {record['pooling']} pooling"
                f"{', L2-normalised' if record['normalize'] else ''}, max length {record['max_length']}, "
                f"query prefix {record['query_prefix']!r}, passage prefix {record['passage_prefix']!r}")
    extra = [f"{k.replace('_', ' ')} {v}" for k, v in record.items()
             if k in ("device", "index_type", "search_params", "shard_num")]
    engine = record.get("engine") or {}
    if engine.get("name", "single") != "single":
        extra.append(f"engine {engine['name']}")
    return line + "".join(f", {e}" for e in extra)


class PromptedPairScorer:
    """NevIR's pairs scored as dense retrieval scores them: the cosine of the query (with its prefix) and the passage
    (with its prefix), encoded by ``search dense``'s encoder."""

    def __init__(self, ref, options: dict, batch_size: int, calibration=None):
        from ..runners.encoders import DenseEncoder

        settings = passage_settings(ref, options)
        self.ref, self.batch_size, self.record = ref, batch_size, encoding_record(ref, options)
        self.passage = DenseEncoder(ref, role="passage", device=options.get("device"), calibration=calibration,
                                    **settings)
        self.query = self.passage.with_prefix(query_prefix(ref, options), "query")

    def parameters(self) -> dict:
        return {"encoding": self.record}

    def score(self, pairs, progress=False) -> list[float]:
        import numpy as np

        queries = sorted({q for q, _ in pairs})
        docs = sorted({d for _, d in pairs})
        q_vectors = dict(zip(queries, self.query.encode(queries, batch_size=self.batch_size)))
        d_vectors = dict(zip(docs, self.passage.encode(docs, batch_size=self.batch_size)))
        return [float(np.dot(q_vectors[q], d_vectors[d])) for q, d in pairs]
