"""The options of the dense runner, grouped: how to encode, how to build the index, how to search and write.

:func:`negplugins.runners.dense.dense_index` and :func:`~negplugins.runners.dense.dense_search` take these
frozen objects (``options=``, ``encoding=``, ``search=``) or, as before, the same names as keyword arguments,
which :func:`option_objects` maps onto them (a keyword none of them has is a ``TypeError``, as for any function).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from ..options import DEFAULT_HITS

__all__ = ["DENSE_DEFAULTS", "EncodingOptions", "IndexOptions", "SearchOptions", "option_objects"]

DENSE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 64, "shard_num": 1}


@dataclass(frozen=True)
class EncodingOptions:
    """How passages and queries are encoded; ``None`` everywhere: the model's own settings (with an existing
    index: the index's).

    Attributes
    ----------
    query_encoder : str or path, optional
        A separate query model (DPR-style pairs); a search only.
    device : str, optional
        ``auto`` (default: CUDA when PyTorch sees a GPU, else the CPU), ``cpu``, ``cuda``, ``cuda:N``, ``mps``.
    dtype : {"float32", "float16", "bfloat16", "int8"}, optional
        Default float32, or with an existing index the index's.
    backend : {"torch", "onnx", "openvino"}, optional
        Default torch, or with an existing index the index's.
    pooling : {"mean", "cls", "last-token"}, optional
    normalize : bool, optional
        For both encoders; ``None``: the passage model's own pooling and normalised vectors.
    max_length : int, optional
        For both encoders; ``None``: each model's own (with an index: the index's, for its own model).
    query_prefix, passage_prefix : str, optional
        Prepended to queries / passages; ``None``: the model's prompts ``query`` / ``document`` (``passage``,
        ``corpus``) from its ``config_sentence_transformers.json``, else none.
    """

    query_encoder: str | os.PathLike | None = None
    device: str | None = None
    dtype: str | None = None
    backend: str | None = None
    pooling: str | None = None
    normalize: bool | None = None
    max_length: int | None = None
    query_prefix: str | None = None
    passage_prefix: str | None = None

    def given(self) -> dict:
        """The options set (not ``None``), by name, in the order of the fields."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class IndexOptions:
    """How the documents are encoded into an index (see :mod:`negplugins.runners.dense_index_format`).

    Attributes
    ----------
    batch_size : int
        Texts per forward pass.
    shard_num, shard_id : int
        Split the documents into ``shard_num`` shards; with ``shard_id`` encode only that shard (for
        parallel encoding), else every shard not finished yet. The index is merged once all are done.
    rebuild : bool
        Re-encode everything, ignoring an up-to-date index and finished shards.
    progress : bool
        Show a tqdm progress bar per shard (and for the queries of a search).
    index_type : str, optional
        faiss factory string (inner product): ``Flat`` (default), ``HNSW32``, ``IVF65536,PQ64``, ...
    train_sample : int, optional
        Vectors an index type that needs training is trained on (default ``min(documents, 100,000)``).
    search_shards : bool
        Keep the shards as the index (``Flat`` only) and search them one at a time, instead of merging them.
    max_index_memory : int or str, optional
        Memory the vectors of one searched index may take (bytes, or ``16G``): a ``Flat`` index over it
        is kept as shards, each within it.
    engine : {"single", "ray"} or RayEngine
        Encode in this process, or on Ray (:mod:`negplugins.runners.ray_engine`; a
        :class:`~negplugins.runners.ray_engine.RayEngine` says which cluster and how many workers). The
        output is the same; give ``shard_num`` > 1 so that an interrupted Ray job resumes from its finished
        shards.
    """

    batch_size: int = DENSE_DEFAULTS["batch_size"]
    shard_num: int = DENSE_DEFAULTS["shard_num"]
    shard_id: int | None = None
    rebuild: bool = False
    progress: bool = True
    index_type: str | None = None
    train_sample: int | None = None
    search_shards: bool = False
    max_index_memory: int | str | None = None
    engine: object = "single"


@dataclass(frozen=True)
class SearchOptions:
    """How an index is searched and the run written.

    Attributes
    ----------
    hits : int
        Documents per query.
    search_params : str, optional
        faiss ``ParameterSpace`` settings for an approximate index (``nprobe=64``, ``efSearch=128``).
    run_tag : str, optional
        Last column of the run; default ``dense-<model name>``.
    command : str, optional
        Recorded in the metadata; defaults to this process's command line.
    force : bool
        Replace an existing run that is committed or was not written by the suite
        (see :func:`negplugins.io.outputs.check_run_output`).
    """

    hits: int = DENSE_DEFAULTS["hits"]
    search_params: str | None = None
    run_tag: str | None = None
    command: str | None = None
    force: bool = False


def option_objects(function: str, keywords: dict, *objects):
    """``objects`` with the ``keywords`` that name their fields set (each name goes to the object that has it).

    Raises
    ------
    TypeError
        A keyword that no object has, worded as Python words an unexpected keyword argument.
    """
    fields = [{f.name for f in dataclasses.fields(obj)} for obj in objects]
    for name in keywords:
        if not any(name in names for names in fields):
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    return tuple(dataclasses.replace(obj, **{k: v for k, v in keywords.items() if k in names})
                 for obj, names in zip(objects, fields))
