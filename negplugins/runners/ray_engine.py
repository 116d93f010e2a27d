"""The Ray engine: ``search dense``'s encoding and ``search rerank``'s scoring as a Ray Data pipeline (read tasks on
this machine, an actor pool of the single process's encoders or scorers, this process writing each shard as it
completes), given the single process's batches so that the output is the same (docs/runners.md, "On a Ray cluster").
The session, resources and errors are :mod:`negplugins.runners.ray_cluster`.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from .._compat.crash_handlers import keep_crash_handlers
from ..errors import UserError, error_line
from ..io.interrupts import end_without_teardown, stop_signal
from ..options import progress_bar
from .encoders import DenseEncoder, SentenceEncoder, sentence_transformers_batches
from .encoding_pipeline import length_groups
from .model_refs import ModelRef, configure_offline
from .ray_cluster import (
    RayEngine,
    RayJobError,
    WorkerPlan,
    describe,
    engine_of,
    session,
    user_error_names,
    worker_error,
    worker_plan,
)
from .ray_failures import RayletWatch, ray_failure

#: The engine's API; ``RayEngine`` and ``keep_crash_handlers`` are the names docs/runners.md gives users.
__all__ = ["Corpus", "FAIL_ONCE_ENV", "RayEngine", "RayJobError", "bi_encoder_scores", "corpus", "describe",
           "encode_shards", "engine_of", "keep_crash_handlers", "score_pairs"]

#: For tests of resuming: a file naming shard ``N``; the first worker to meet shard ``N`` deletes it and fails.
FAIL_ONCE_ENV = "NEGPLUGINS_RAY_FAIL_ONCE"


def _fail_once(part: int) -> None:
    flag = os.environ.get(FAIL_ONCE_ENV)
    if not flag:
        return
    try:
        if Path(flag).read_text(encoding="utf-8").strip() != str(part):
            return
        os.remove(flag)
    except OSError:  # no flag, or another worker took it
        return
    raise RuntimeError(f"simulated worker failure on shard {part} ({FAIL_ONCE_ENV})")


def _threads(num_cpus: int, device: str) -> None:
    if device == "cpu":
        import torch

        torch.set_num_threads(max(1, int(num_cpus)))


class _EncoderWorker:
    """Texts -> vectors, one group per call: a ``DenseEncoder`` of ``settings``, else a ``SentenceEncoder``."""

    def __init__(self, ref: ModelRef, batch_size: int, max_length: int | None, num_cpus: int, device: str,
                 settings: dict | None = None, cache: str | None = None, calibration: list[str] | None = None):
        configure_offline()  # this worker process only
        _threads(num_cpus, device)
        if settings is not None:
            self.encoder = DenseEncoder(ref, role="passage", device=device, cache=cache, calibration=calibration,
                                        **settings)
        else:
            self.encoder = SentenceEncoder(ref, device=device)
            if max_length:
                self.encoder.model.max_seq_length = max_length
        self.batch_size = batch_size

    def __call__(self, batch):
        parts, positions, vectors = [], [], []
        for part, where, texts in zip(batch["part"].to_pylist(), batch["positions"].to_pylist(),
                                      batch["texts"].to_pylist()):
            _fail_once(part)
            vectors.append(self.encoder.encode(texts, batch_size=self.batch_size))
            parts.append(np.full(len(where), part, dtype=np.int64))
            positions.append(np.asarray(where, dtype=np.int64))
        return {"part": np.concatenate(parts), "pos": np.concatenate(positions), "vector": np.concatenate(vectors)}


class _ScorerWorker:
    """(first, second) pairs -> scores; each input row is one group, scored in one call to the scorer."""

    def __init__(self, make_scorer, num_cpus: int):
        configure_offline()
        _threads(num_cpus, "cpu")
        self.scorer = make_scorer()

    def __call__(self, batch):
        positions, scores = [], []
        for where, firsts, seconds in zip(batch["positions"].to_pylist(), batch["firsts"].to_pylist(),
                                          batch["seconds"].to_pylist()):
            scores.append(np.asarray(self.scorer.score(list(zip(firsts, seconds))), dtype=np.float64))
            positions.append(np.asarray(where, dtype=np.int64))
        return {"pos": np.concatenate(positions), "score": np.concatenate(scores)}


@dataclass(frozen=True)
class Corpus:
    """A corpus's document ids in ``docs_iter`` order (the order of the index) and their texts' lengths."""

    ids: list[str]
    lengths: list[int]


def corpus(dataset, dataset_id: str) -> Corpus:
    """A corpus's ids and text lengths, its docstore built (the read tasks look their groups' documents up by id)."""
    store = dataset.docs_store()
    if not store.built():
        store.build()
    ids, lengths = [], []
    for doc in dataset.docs_iter():
        ids.append(doc.doc_id)
        lengths.append(len(datasets.document_text(doc)))
    if len(set(ids)) != len(ids):
        seen = set()
        twice = next(i for i in ids if i in seen or seen.add(i))
        raise UserError(f"{dataset_id}: document id {twice!r} occurs more than once; --engine ray looks documents up "
                        f"by id, so use --engine single")
    return Corpus(ids, lengths)


def _read_group(dataset_id: str, environment: dict, part: int, positions: list[int], ids: list[str],
                lengths: list[int]):
    """The read task of one group: its documents' texts, looked up in the docstore, as one block of one row."""
    import pyarrow as pa

    for key in [key for key in os.environ if key.startswith("IR_DATASETS") and key not in environment]:
        del os.environ[key]
    os.environ.update(environment)  # this worker reads the dataset as the command's process does
    found = datasets.load(dataset_id).docs_store().get_many(ids)
    texts = [datasets.document_text(found[doc_id]) if doc_id in found else None for doc_id in ids]
    if any(text is None or len(text) != length for text, length in zip(texts, lengths)):
        raise UserError(f"{dataset_id}: its documents changed while they were being encoded; run the command again")
    yield pa.table({"part": pa.array([part], pa.int64()), "positions": pa.array([positions], pa.list_(pa.int64())),
                    "texts": pa.array([texts], pa.list_(pa.string()))})


def _group_source(dataset_id: str, groups: list[tuple[int, list[int], list[str], list[int]]]):
    """A Ray Data source of one read task per group ``(shard, positions in the shard, doc ids, text lengths)``."""
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    environment = {key: value for key, value in os.environ.items() if key.startswith("IR_DATASETS")}

    class GroupSource(Datasource):
        def estimate_inmemory_data_size(self):
            return sum(sum(lengths) for _, _, _, lengths in groups)

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [ReadTask(lambda group=group: _read_group(dataset_id, environment, *group),
                             BlockMetadata(num_rows=1, size_bytes=sum(group[3]), input_files=None, exec_stats=None))
                    for group in groups]

    return GroupSource()


def _iterate(ray, build, step: str, what: str) -> Iterator[dict]:
    """The output batches of the pipeline ``build()`` makes; a failure, or this machine's raylet dying, becomes one
    line (``step`` failed, why, and ``what`` was kept)."""
    dataset = build()
    failure = None
    with RayletWatch(ray) as watch:
        try:
            batches = iter(dataset.iter_batches(batch_size=None, batch_format="numpy"))
            while True:
                with watch.inside():
                    batch = next(batches, None)
                if batch is None:
                    break
                yield batch
        except KeyboardInterrupt:
            if not watch.died or stop_signal():  # Ctrl-C
                raise
            end_without_teardown()  # Ray's exit handler would wait for the raylet, and its core worker end the process
            failure = RayJobError(f"{step} failed: the Ray raylet of this machine died (process {watch.pid}); {what}")
        except Exception as error:  # noqa: BLE001 - whatever failed in the cluster, reported as one line
            failure = _job_failure(error, step, what)
    # a failed dataset keeps its workers, CPUs and GPUs while referenced (Ray's exception's cycles too): let go first
    batches = dataset = None
    if failure is not None:
        gc.collect()
        raise failure  # not chained to Ray's exception, whose traceback holds the dataset too


def _job_failure(error: Exception, step: str, what: str) -> UserError:
    """The one-line error of a Ray job: bad input met by a worker, Ray's own failure, or any other error."""
    if isinstance(error, UserError) and not isinstance(error, RayJobError):
        return error
    happened = ray_failure(error)
    if happened is not None:
        return RayJobError(f"{step} failed: {happened}; {what}", detail=error)
    raised = worker_error(error)
    if raised is not None and raised[0] in user_error_names():  # bad input met by a worker (a model file)
        return UserError(raised[1])
    name, message = raised or (type(error).__name__, error_line(error))
    return RayJobError(f"the Ray job failed ({name}: {message}); {what}", detail=error)


def encode_shards(engine, dataset_id: str, ref: ModelRef, shards: dict[int, tuple[int, int]], corpus: Corpus,
                  dimension: int, batch_size: int, settings: dict, cache: str | os.PathLike | None = None,
                  calibration: list[str] | None = None, progress: bool = True,
                  desc: str = "encoding") -> Iterator[tuple[int, np.ndarray]]:
    """Encode ``{shard: (start, end)}`` of a corpus on Ray with the passage encoder of ``settings``; yields
    ``(shard, vectors)`` as each shard completes, in any order. The model folder must exist on every node."""
    engine = engine_of(engine)
    vectors = {part: np.zeros((end - start, dimension), dtype=np.float32) for part, (start, end) in shards.items()}
    filled = {part: np.zeros(end - start, dtype=bool) for part, (start, end) in shards.items()}
    for part in [part for part, (start, end) in shards.items() if end == start]:
        vectors.pop(part), filled.pop(part)
        yield part, np.zeros((0, dimension), dtype=np.float32)
    if not vectors:
        return
    groups = []
    for part in sorted(vectors):
        start, end = shards[part]
        for positions in length_groups(corpus.lengths[start:end], batch_size):  # the single process's groups
            groups.append((part, positions, [corpus.ids[start + i] for i in positions],
                           [corpus.lengths[start + i] for i in positions]))
    with session(engine) as ray:
        plan = worker_plan(ray, engine, groups=len(groups))
        node = ray.get_runtime_context().get_node_id()
        source = _group_source(dataset_id, groups)
        constructor = {"ref": ref, "batch_size": batch_size, "max_length": None,  # the settings hold it
                       "device": plan.device, "settings": dict(settings),
                       "cache": None if cache is None else str(Path(cache).resolve()), "calibration": calibration}

        def build():
            # the read tasks run here, where the dataset is, take no CPU from the workers, and run a few at a time
            data = ray.data.read_datasource(source, override_num_blocks=len(groups), num_cpus=0,
                                            concurrency=min(len(groups), 2 * plan.workers),
                                            label_selector={"ray.io/node-id": node})
            return _map(ray, plan, data, _EncoderWorker, constructor)

        total = sum(len(done) for done in filled.values())
        with progress_bar(total, f"{desc} on Ray ({plan.workers} worker{'s' if plan.workers > 1 else ''})",
                          progress) as bar:
            for batch in _iterate(ray, build, f"encoding {dataset_id} on Ray",
                                  "the shards finished so far are kept: run the same command again to resume"):
                for part in np.unique(batch["part"]):
                    part = int(part)
                    rows = batch["part"] == part
                    where = batch["pos"][rows]
                    new = ~filled[part][where]
                    vectors[part][where] = batch["vector"][rows]
                    filled[part][where] = True
                    bar.update(int(new.sum()))
                    if filled[part].all():
                        filled.pop(part)
                        yield part, vectors.pop(part)
    if vectors:
        raise RayJobError(f"the Ray job ended without encoding shard(s) {', '.join(map(str, sorted(vectors)))}; "
                          f"run the same command again to resume")


def _map(ray, plan: WorkerPlan, data, worker, constructor: dict):
    """``data`` through an actor pool of ``worker``s, one group (input row) per call."""
    # Ray Data's defaults: a lost worker is restarted and its groups retried; an error raised by the model code
    # fails the job (and the command resumes from the finished shards)
    return data.map_batches(worker, batch_size=1, batch_format="pyarrow",
                            fn_constructor_kwargs=dict(constructor, num_cpus=plan.num_cpus),
                            compute=ray.data.ActorPoolStrategy(size=plan.workers), num_cpus=plan.num_cpus,
                            num_gpus=plan.num_gpus)


def _run_groups(engine, rows: list[dict], worker, constructor: dict, gpus: bool, step: str,
                what: str) -> Iterator[dict]:
    with session(engine) as ray:
        plan = worker_plan(ray, engine, gpus=gpus, groups=len(rows))
        if worker is _EncoderWorker:
            constructor = dict(constructor, device=plan.device)

        def build():
            data = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
            return _map(ray, plan, data, worker, constructor)

        yield from _iterate(ray, build, step, what)


def score_pairs(engine, make_scorer, pairs: list[tuple[str, str]], batch_size: int) -> list[float]:
    """Score ``(query, document)`` pairs on Ray workers (CPU) with the scorers a picklable ``make_scorer()`` builds,
    in groups of whole batches of the single-process scorer's order (longest pair first)."""
    engine = engine_of(engine)
    if not pairs:
        return []
    rows = [{"positions": group, "firsts": [pairs[i][0] for i in group], "seconds": [pairs[i][1] for i in group]}
            for group in length_groups([len(query) + len(doc) for query, doc in pairs], batch_size)]
    scores = np.full(len(pairs), np.nan)
    for batch in _run_groups(engine, rows, _ScorerWorker, {"make_scorer": make_scorer}, gpus=False,
                             step="scoring the pairs on Ray", what="nothing was written"):
        scores[batch["pos"]] = batch["score"]
    if np.isnan(scores).any():
        raise RayJobError("the Ray job ended without scoring every pair; nothing was written")
    return [float(score) for score in scores]


def bi_encoder_scores(engine, ref: ModelRef, pairs: list[tuple[str, str]], batch_size: int,
                      max_length: int | None = None, known: dict | None = None) -> list[float]:
    """The bi-encoder reranker's scores with the encoding on Ray, in the single-process scorer's batches (each distinct
    text once, queries then documents); ``known`` maps document texts to vectors read from a dense index."""
    engine = engine_of(engine)
    if not pairs:
        return []
    known = known or {}
    queries = sorted({q for q, _ in pairs})
    docs = sorted({d for _, d in pairs if d not in known})
    texts = queries + docs
    groups = sentence_transformers_batches(queries, batch_size) + \
        [[len(queries) + i for i in group] for group in sentence_transformers_batches(docs, batch_size)]
    rows = [{"part": 0, "positions": group, "texts": [texts[i] for i in group]} for group in groups]
    vectors: np.ndarray | None = None
    done = np.zeros(len(texts), dtype=bool)
    constructor = {"ref": ref, "batch_size": batch_size, "max_length": max_length}
    for batch in _run_groups(engine, rows, _EncoderWorker, constructor, gpus=True,
                             step="encoding the bi-encoder's texts on Ray", what="nothing was written"):
        if vectors is None:
            vectors = np.zeros((len(texts), batch["vector"].shape[1]), dtype=np.float32)
        vectors[batch["pos"]] = batch["vector"]
        done[batch["pos"]] = True
    if vectors is None or not done.all():
        raise RayJobError("the Ray job ended without encoding every text; nothing was written")
    q_vectors = dict(zip(queries, vectors[:len(queries)]))
    d_vectors = {**known, **dict(zip(docs, vectors[len(queries):]))}
    return [float(np.dot(q_vectors[q], d_vectors[d])) for q, d in pairs]
