"""Encoding at the model's pace: groups of texts are tokenized ahead of the model in threads, cut into batches by a
token budget, padded (and pinned, for CUDA) and run, each group's rows yielded in its order. The batches depend
on a group's texts only, never on workers or timing (docs/gpu-encoding.md).
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from .._compat.fast_tokenizer import TokenRows, token_rows

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


class TorchForward:
    """A PyTorch module (one output row per input row) run on ``device``; on CUDA :meth:`submit` queues the copies
    and the forward pass without waiting, and :meth:`result` waits for that batch only."""

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

    def __call__(self, features: dict) -> np.ndarray:
        return self.result(self.submit(features))


def _default_workers(pin: bool) -> int:
    if not pin:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(CUDA_WORKERS, cpus - 2))


class EncodingPipeline:
    """Tokenize, batch by token budget and run a model over groups of texts: ``forward`` is a :class:`TorchForward`
    or a function from a batch's numpy inputs to one row per text; ``row_shape=None`` gives a list per group, rows of
    any shape (ColBERT's); ``workers``: tokenizer threads (default :data:`CUDA_WORKERS` on CUDA, else 1)."""

    def __init__(self, tokenize: Callable[[list[str]], TokenRows], forward, *, token_budget: int,
                 row_shape: tuple | None, pad_id: int, pad_type_id: int = 0, left: bool = False,
                 names: Sequence[str] = ("input_ids", "attention_mask"), workers: int | None = None):
        self.tokenize = tokenize
        # a function's result is ready when it returns (the CPU, ONNX, OpenVINO)
        self.submit = getattr(forward, "submit", forward)
        self.result = getattr(forward, "result", lambda handle: handle)
        self.pin = getattr(forward, "pin", False)
        self.token_budget = int(token_budget)
        self.row_shape = None if row_shape is None else tuple(row_shape)
        self.pad = {"pad_id": int(pad_id), "pad_type_id": int(pad_type_id), "left": bool(left), "names": tuple(names)}
        self.workers = _default_workers(self.pin) if workers is None else max(1, int(workers))

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
                    pending.append((item[0], self.submit(item[1])))
                    while len(pending) > (IN_FLIGHT if self.pin else 0):
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
        result = self.result(handle)
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
                        if self.pin:
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
    """The pipeline of a ``DenseEncoder`` (token budget ``batch_size x max_length``), given :func:`dense_texts`."""
    tokenizer = encoder.tokenizer
    names = [name for name in encoder._inputs if name == "input_ids" or name in tokenizer.model_input_names]
    return EncodingPipeline(token_rows(tokenizer, encoder.max_length, "token_type_ids" in names), encoder.runner,
                            token_budget=max(1, int(batch_size)) * encoder.max_length, row_shape=(encoder.dimension,),
                            pad_id=tokenizer.pad_token_id, pad_type_id=getattr(tokenizer, "pad_token_type_id", 0),
                            left=tokenizer.padding_side == "left", names=names, workers=workers)


def dense_texts(encoder, texts: Iterable[str]) -> list[str]:
    """The texts as a ``DenseEncoder`` tokenizes them: prefixed, lower-cased where the model says so."""
    texts = [encoder.prefix + text for text in texts]
    return [text.lower() for text in texts] if encoder.lowercase else texts
