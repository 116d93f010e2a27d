"""Encoding at the model's pace: texts are tokenized ahead of the model, and batches are cut by a token budget.

One :class:`EncodingPipeline` run takes groups of texts and yields each group's output rows in the group's order::

    groups of texts   ->   tokenizer workers     ->   batcher thread                ->   the model (caller's thread)
                           (threads; the Rust        sort by token count, cut by        forward; on CUDA the inputs
                           tokenizer releases        the token budget, pad (and         go over non-blocking, the
                           the GIL)                  pin, for CUDA)                     outputs come back async

* **Groups.** The caller's unit of work: ``search dense`` cuts a shard, sorted by text length, into groups of
  :data:`GROUP_BATCHES` x ``batch size`` texts (:func:`length_groups`), the groups a Ray worker gets too. A batch never spans two groups, so a group's vectors depend on its texts and the settings only,
  and the Ray workers compute the very batches of the single process.
* **Token budget.** Within a group the texts are sorted by token count (longest first, ties in group order) and
  cut into batches of at most ``token_budget`` padded tokens (rows x the batch's longest row; at least one row). The
  default budget, ``batch_size x max_length``, is the padded size of a batch of ``batch_size`` texts of the longest
  length: no batch takes more memory than such a batch did, and batches of short texts hold more of them. Sorting
  by token count leaves little padding (the transformers models cannot skip padded positions with PyTorch's SDPA
  attention; see docs/gpu-encoding.md).
* **Workers.** Threads, not processes: the Rust tokenizer (:mod:`negplugins._compat.fast_tokenizer`) releases the
  GIL, and its ids need no pickling. The batcher tokenizes up to two groups ahead, so the next group is ready
  when the model finishes this one; at most :data:`QUEUED_BATCHES` padded batches wait for the model. On CUDA
  :data:`CUDA_WORKERS` threads (at most the CPUs this process may use, less two) tokenize; elsewhere the batcher thread alone does, since
  the model there is far slower than the tokenizer and shares the CPUs.
* **Transfers.** On CUDA the batcher pins each batch (page-locked memory), the model's thread copies it to the GPU
  with ``non_blocking=True``, and each output is copied back into pinned memory without waiting; the thread waits
  for a batch's output only once :data:`IN_FLIGHT` later batches are queued on the GPU, so the GPU never waits for
  Python. Elsewhere the forward pass is synchronous.

The output does not depend on the number of workers or on timing: the batches are a function of the group's texts.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from .._compat.fast_tokenizer import TokenRows, token_rows

__all__ = ["CUDA_WORKERS", "EncodingPipeline", "GROUP_BATCHES", "IN_FLIGHT", "QUEUED_BATCHES", "TorchForward",
           "dense_pipeline", "dense_texts", "length_groups", "pad_batch", "token_budget_batches"]

#: Texts per group, in batch sizes (:func:`length_groups`).
GROUP_BATCHES = 16
#: Tokenizer threads on a CUDA device (at most the CPUs this process may use, less two).
CUDA_WORKERS = 8
#: Padded batches that wait for the model at most.
QUEUED_BATCHES = 8
#: Batches queued on the GPU before the model's thread waits for the oldest one's output.
IN_FLIGHT = 2
_SLICE = 256  # texts per tokenizer call of a worker


def length_groups(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Positions of ``lengths`` (the texts' lengths in characters) in the groups a shard is encoded in: longest first
    (a stable sort), cut into groups of :data:`GROUP_BATCHES` x ``batch_size``."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    size = max(1, batch_size * GROUP_BATCHES)
    return [order[first:first + size] for first in range(0, len(order), size)]


def token_budget_batches(lengths: Sequence[int] | np.ndarray, token_budget: int) -> list[np.ndarray]:
    """Positions of ``lengths`` (token counts) in batches: longest first, ties in input order, each batch at most
    ``token_budget`` padded tokens (rows x its first, longest row) and at least one row."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        rows = max(1, int(token_budget) // max(1, int(lengths[order[start]])))
        batches.append(order[start:start + rows])
        start += rows
    return batches


def pad_batch(rows: TokenRows, positions: np.ndarray, pad_id: int, pad_type_id: int = 0, left: bool = False,
              names: Sequence[str] = ("input_ids", "attention_mask", "token_type_ids")) -> dict[str, np.ndarray]:
    """The rows at ``positions`` padded to the longest of them, as the transformers call with ``padding=True``
    pads them (``int64`` arrays, padding on the left with ``left``); only the inputs in ``names``."""
    lengths = rows.lengths[positions]
    count, width = len(positions), int(lengths.max()) if len(positions) else 0
    before = np.cumsum(lengths) - lengths
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(before, lengths)
    source = np.repeat(rows.offsets[positions], lengths) + within
    row = np.repeat(np.arange(count), lengths)
    column = within + np.repeat(width - lengths, lengths) if left else within
    out = {}
    for name, values, pad in (("input_ids", rows.ids, pad_id), ("token_type_ids", rows.types, pad_type_id)):
        if name in names and values is not None:
            array = np.full((count, width), pad, dtype=np.int64)
            array[row, column] = values[source]
            out[name] = array
    if "attention_mask" in names:
        mask = np.zeros((count, width), dtype=np.int64)
        mask[row, column] = 1
        out["attention_mask"] = mask
    return {name: out[name] for name in names if name in out}


class _Synchronous:
    """A forward function on numpy inputs whose result is ready when it returns (the CPU, ONNX, OpenVINO)."""

    pin = False

    def __init__(self, forward: Callable[[dict], np.ndarray]):
        self.forward = forward

    def submit(self, features: dict):
        return self.forward(features)

    @staticmethod
    def result(handle) -> np.ndarray:
        return handle


class TorchForward:
    """A PyTorch module run on ``device``: ``module(**inputs)`` must return a tensor of one row per input row.

    On CUDA, :meth:`submit` queues the input copies, the forward pass and the output's copy into pinned memory
    without waiting for any of them; :meth:`result` waits for that batch only. Elsewhere both are synchronous.
    """

    def __init__(self, module, device):
        import torch

        self.torch = torch
        self.module = module
        self.device = torch.device(device)
        self.pin = self.device.type == "cuda"

    def submit(self, features: dict):
        torch = self.torch
        with torch.inference_mode():
            inputs = {name: (value if torch.is_tensor(value) else torch.from_numpy(value)).to(
                self.device, non_blocking=self.pin) for name, value in features.items()}
            output = self.module(**inputs).float()
            if not self.pin:
                return output.cpu().numpy()
            host = torch.empty(output.shape, dtype=output.dtype, pin_memory=True)
            host.copy_(output, non_blocking=True)
            done = torch.cuda.Event()
            done.record(torch.cuda.current_stream(self.device))  # the stream of this device, not the current one's
            return done, host

    def result(self, handle) -> np.ndarray:
        if not self.pin:
            return handle
        done, host = handle
        done.synchronize()
        return host.numpy()


def _default_workers(pin: bool) -> int:
    if not pin:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(CUDA_WORKERS, cpus - 2))


class EncodingPipeline:
    """Tokenize, batch by token budget and run a model over groups of texts (see the module documentation).

    Parameters
    ----------
    tokenize : callable
        ``texts -> TokenRows`` (:func:`negplugins._compat.fast_tokenizer.token_rows`), safe to call from threads.
    forward : TorchForward or callable
        The model: a :class:`TorchForward`, or a function from a batch's numpy inputs to a numpy array of one row
        per text (run synchronously).
    token_budget : int
        Padded tokens per batch at most.
    row_shape : tuple or None
        The shape of one output row (of an empty group's output): a group's output is a ``float32`` array; ``None``:
        a list, one item per text, of what ``forward`` returns per row (rows of different shapes, as ColBERT's
        token vectors).
    pad_id, pad_type_id : int
        The padding ids (the tokenizer's ``pad_token_id`` and ``pad_token_type_id``).
    left : bool
        Pad on the left (the tokenizer's ``padding_side``).
    names : sequence of str
        The model inputs to build (``input_ids``, ``attention_mask``, ``token_type_ids``).
    workers : int, optional
        Tokenizer threads; default :data:`CUDA_WORKERS` (capped by the CPUs) on CUDA, else 1.
    """

    def __init__(self, tokenize: Callable[[list[str]], TokenRows], forward, *, token_budget: int,
                 row_shape: tuple | None, pad_id: int, pad_type_id: int = 0, left: bool = False,
                 names: Sequence[str] = ("input_ids", "attention_mask"), workers: int | None = None):
        self.tokenize = tokenize
        self.forward = forward if hasattr(forward, "submit") else _Synchronous(forward)
        self.token_budget = int(token_budget)
        self.row_shape = None if row_shape is None else tuple(row_shape)
        self.pad = {"pad_id": int(pad_id), "pad_type_id": int(pad_type_id), "left": bool(left), "names": tuple(names)}
        self.workers = _default_workers(self.forward.pin) if workers is None else max(1, int(workers))

    def run(self, groups: Iterable[Sequence[str]],
            progress: Callable[[int], object] | None = None) -> Iterator[np.ndarray | list]:
        """Each group's output, rows in the group's order; ``progress(rows)`` after each batch."""
        batches: queue.Queue = queue.Queue(maxsize=QUEUED_BATCHES)
        stop = threading.Event()
        batcher = threading.Thread(target=self._batcher, args=(groups, batches, stop), daemon=True,
                                   name="negplugins-batcher")
        batcher.start()
        pending: deque = deque()
        out: np.ndarray | list | None = None
        try:
            while True:
                kind, *item = batches.get()
                if kind == "group":
                    out = [None] * item[0] if self.row_shape is None else \
                        np.zeros((item[0], *self.row_shape), dtype=np.float32)
                elif kind == "batch":
                    pending.append((item[0], self.forward.submit(item[1])))
                    while len(pending) > (IN_FLIGHT if self.forward.pin else 0):
                        self._collect(pending.popleft(), out, progress)
                elif kind == "end":
                    while pending:
                        self._collect(pending.popleft(), out, progress)
                    yield out
                elif kind == "error":
                    raise item[0]
                else:  # done
                    return
        finally:
            stop.set()
            batcher.join()

    def _collect(self, entry, out: np.ndarray | list, progress) -> None:
        positions, handle = entry
        result = self.forward.result(handle)
        if isinstance(out, list):
            for position, row in zip(positions.tolist(), result):
                out[position] = row
        else:
            out[positions] = result
        if progress is not None:
            progress(len(positions))

    def _batcher(self, groups: Iterable[Sequence[str]], batches: queue.Queue, stop: threading.Event) -> None:
        def put(item) -> bool:
            while not stop.is_set():
                try:
                    batches.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        pool = None
        try:
            if self.workers > 1:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(self.workers, thread_name_prefix="negplugins-tokenizer")
            source, ahead = iter(groups), deque()

            def read_ahead() -> None:  # the next group, its tokenization started on the workers
                texts = next(source, None)
                if texts is None:
                    return
                texts = list(texts)
                step = max(32, -(-len(texts) // (4 * self.workers))) if pool else _SLICE
                slices = [texts[start:start + step] for start in range(0, len(texts), step)]
                ahead.append((len(texts), [pool.submit(self.tokenize, part) for part in slices] if pool else slices))

            read_ahead()
            read_ahead()
            while ahead and not stop.is_set():
                count, parts = ahead.popleft()
                read_ahead()
                if not put(("group", count)):
                    return
                if count:
                    rows = TokenRows.concat([part.result() if pool else self.tokenize(part) for part in parts])
                    for positions in token_budget_batches(rows.lengths, self.token_budget):
                        features = pad_batch(rows, positions, **self.pad)
                        if self.forward.pin:
                            features = {name: self._pinned(value) for name, value in features.items()}
                        if not put(("batch", positions, features)):
                            return
                if not put(("end",)):
                    return
            put(("done",))
        except BaseException as error:  # noqa: BLE001 - raised again in the model's thread
            put(("error", error))
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _pinned(array: np.ndarray):
        import torch

        return torch.from_numpy(array).pin_memory()


def dense_pipeline(encoder, batch_size: int, workers: int | None = None) -> EncodingPipeline:
    """The pipeline of a :class:`~negplugins.runners.encoders.DenseEncoder` (any backend), token budget
    ``batch_size x max_length``; it is given the texts as they are (:func:`dense_texts` adds prefix and case)."""
    from .backends import TorchRunner

    tokenizer, runner = encoder.tokenizer, encoder.runner
    names = [name for name in encoder._inputs if name == "input_ids" or name in tokenizer.model_input_names]
    forward = TorchForward(runner.module, runner.device) if isinstance(runner, TorchRunner) else runner
    return EncodingPipeline(token_rows(tokenizer, encoder.max_length, "token_type_ids" in names), forward,
                            token_budget=max(1, int(batch_size)) * encoder.max_length, row_shape=(encoder.dimension,),
                            pad_id=tokenizer.pad_token_id, pad_type_id=getattr(tokenizer, "pad_token_type_id", 0),
                            left=tokenizer.padding_side == "left", names=names, workers=workers)


def dense_texts(encoder, texts: Iterable[str]) -> list[str]:
    """The texts as a :class:`~negplugins.runners.encoders.DenseEncoder` feeds them to its tokenizer: prefix, then
    lower case where the model says so."""
    texts = [encoder.prefix + text for text in texts]
    return [text.lower() for text in texts] if encoder.lowercase else texts
