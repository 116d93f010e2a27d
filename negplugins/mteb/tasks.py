"""The suite's benchmarks as MTEB retrieval tasks, their metadata from the specs, their data read through ir_datasets.

Nothing is registered in MTEB (docs/mteb.md).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from datasets import Dataset, concatenate_datasets
from mteb.abstasks import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.get_tasks import MTEBTasks
from mteb.timing import TimingStack

from ir_datasets_ext.datasets.negplugins_demo import NAME as DEMO

from .. import datasets
from ..errors import UserError
from . import naming

#: Documents per in-memory chunk of a corpus table (MS MARCO's 8.8M passages are built chunk by chunk).
_CHUNK = 100_000
#: MTEB's task type of each protocol.
_TASK_TYPES = {"retrieval": "Retrieval", "pairs": "Reranking"}


class UnknownTaskError(UserError, KeyError):
    """A name that is neither a task of :func:`get_tasks` nor a benchmark of the suite."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0])


class BenchmarkTask(AbsTaskRetrieval):
    """An MTEB retrieval task for one of the suite's benchmarks; :func:`get_tasks` makes one subclass per benchmark."""

    benchmark: str
    _support_cross_encoder = True

    def load_data(self, num_proc: int | None = None, *, timer: TimingStack | None = None, **kwargs: Any) -> None:
        """Read the benchmark's protocol datasets through ir_datasets into MTEB's ``{subset: {split: data}}``."""
        if self.data_loaded:
            return
        spec = datasets.benchmark_of(self.benchmark)
        timer = timer or TimingStack()
        self.dataset = {}
        self._loaded = {}
        with timer("Data loading", log_message=f"Loading dataset {self.metadata.name} through ir_datasets..."):
            for dataset_id in spec.benchmark_datasets():
                split, subset = naming.split_and_subset(spec, dataset_id)
                dataset, split_data = _split_data(spec, dataset_id)
                self.dataset.setdefault(subset, {})[split] = split_data
                self._loaded[(split, subset)] = (dataset_id, dataset)
        with timer("Dataset transform"):
            self.dataset_transform(num_proc=num_proc)
        self.data_loaded = True

    def task_specific_scores(self, scores, qrels, results, hf_split: str, hf_subset: str) -> dict[str, float]:
        """MTEB's own task scores (NevIR's ``paired_accuracy``) and every other measure of the benchmark's spec."""
        task_scores = dict(super().task_specific_scores(scores, qrels, results, hf_split, hf_subset))
        dataset_id, dataset = self._loaded[(hf_split, hf_subset)]
        # MTEB's retrieval evaluator computes these itself (mteb._evaluators.retrieval_metrics)
        taken = {f"{name}_at_{k}" for name in ("ndcg", "map", "recall", "precision", "mrr", "hit_rate")
                 for k in self.k_values} | set(task_scores)
        names, _ = datasets.benchmark_of(self.benchmark).default_measures(dataset_id, qrels)
        wanted = {naming.score_key(name): name for name in names if naming.score_key(name) not in taken}
        if wanted:  # scored on MTEB's retrieved lists by the suite's evaluation
            from ..evaluation.scoring import Evaluator

            run = {q: {d: float(s) for d, s in docs.items()} for q, docs in results.items()}
            evaluator = Evaluator.load(dataset_id, list(wanted.values()), dataset=dataset, qrels=qrels)
            values = evaluator.score(run, "mteb", "mteb").overall
            task_scores.update({key: values[name] for key, name in wanted.items() if not math.isnan(values[name])})
        return task_scores


def _table(rows, columns) -> Dataset:
    """A ``datasets.Dataset`` of ``rows`` (tuples in ``columns`` order), built in chunks."""
    parts, chunk = [], []
    for row in rows:
        chunk.append(row)
        if len(chunk) == _CHUNK:
            parts.append(Dataset.from_dict(dict(zip(columns, map(list, zip(*chunk))))))
            chunk = []
    if chunk or not parts:
        parts.append(Dataset.from_dict({column: [row[i] for row in chunk] for i, column in enumerate(columns)}))
    return parts[0] if len(parts) == 1 else concatenate_datasets(parts)


def _split_data(spec, dataset_id: str):
    """``(dataset, MTEB's RetrievalSplitData)`` of one dataset, read through ir_datasets."""
    from ..evaluation.scoring import Evaluator

    evaluator = Evaluator.load(dataset_id)
    dataset, qrels = evaluator.dataset, evaluator.qrels
    texts = datasets.query_texts(dataset)
    queries = _table(((query_id, text) for query_id, text in texts.items() if query_id in qrels), ("id", "text"))
    corpus = _table(datasets.iter_docs_for_indexing(dataset), ("id", "text"))
    top_ranked = None
    if spec.protocol.kind == "pairs":
        top_ranked = {}
        for scored in dataset.scoreddocs_iter():
            top_ranked.setdefault(scored.query_id, []).append(scored.doc_id)
    return dataset, {"corpus": corpus, "queries": queries, "relevant_docs": qrels, "top_ranked": top_ranked}


def _metadata(spec) -> TaskMetadata:
    """MTEB's metadata of a benchmark's task, from its spec (validated by MTEB's ``TaskMetadata``)."""
    places = [naming.split_and_subset(spec, dataset_id) for dataset_id in spec.benchmark_datasets()]
    splits = list(dict.fromkeys(split for split, _ in places))
    subsets = list(dict.fromkeys(subset for _, subset in places))
    languages = naming.language_codes(spec)
    ids = ", ".join(spec.benchmark_datasets())
    return TaskMetadata(
        name=naming.task_name(spec),
        description=f"{spec.summary} ({spec.paper.reference}); the negplugins suite's benchmark, read through ir_datasets "
                    f"({ids}).",
        reference=spec.paper.url or None,
        dataset={"path": spec.data.url or f"ir_datasets:{spec.name}", "revision": naming.dataset_revision(spec)},
        type=_TASK_TYPES[spec.protocol.kind],
        category="t2t",
        modalities=["text"],
        eval_splits=splits,
        eval_langs=languages if subsets == ["default"] else {subset: languages for subset in subsets},
        main_score=naming.main_score(spec),
        license=naming.license_of(spec),
        bibtex_citation=spec.citation() or "",
    )


def _nevir_metadata(spec, mteb_class) -> TaskMetadata:
    """MTEB's NevIR metadata, with the data source the suite reads instead of MTEB's copy."""
    fields = mteb_class.metadata.model_dump()
    fields["dataset"] = {"path": spec.data.url, "revision": naming.dataset_revision(spec)}
    fields["description"] += (f" Read by negplugins through ir_datasets ({', '.join(spec.benchmark_datasets())}) "
                              "from the NevIR release, not from MTEB's NevIR-mteb copy.")
    return TaskMetadata(**fields)


@functools.lru_cache(maxsize=None)
def _task_class(benchmark: str) -> type[BenchmarkTask]:
    spec = datasets.benchmark_of(benchmark)
    name = naming.task_name(spec)
    bases: tuple[type, ...] = (BenchmarkTask,)
    if name == "NevIR":
        import mteb

        mteb_class = type(mteb.get_task("NevIR"))  # MTEB's own task: its paired_accuracy and metadata are reused
        bases, metadata = (BenchmarkTask, mteb_class), _nevir_metadata(spec, mteb_class)
    else:
        metadata = _metadata(spec)
    class_name = "".join(ch for ch in name if ch.isalnum()) + "Task"
    return type(class_name, bases, {"metadata": metadata, "benchmark": spec.name, "__module__": __name__})


def task_names() -> dict[str, str]:
    """Task name -> benchmark name, for every benchmark of the suite (the demo's task included)."""
    return {naming.task_name(spec): spec.name for spec in datasets.benchmarks()}


def get_tasks(names=None) -> MTEBTasks:
    """MTEB tasks for the suite's benchmarks, by task or benchmark name (default: the five, not the demo)."""
    known = task_names()
    if names is None:
        benchmarks = [benchmark for benchmark in known.values() if benchmark != DEMO]
    else:
        if isinstance(names, str):
            names = [names]
        benchmarks = []
        for name in names:
            benchmark = known.get(name) or (name if name in known.values() else None)
            if benchmark is None:
                raise UnknownTaskError(f"unknown task {name!r}; negplugins' MTEB tasks: {', '.join(known)}")
            benchmarks.append(benchmark)
    return MTEBTasks(_task_class(benchmark)() for benchmark in benchmarks)
