"""A release file trusted on first use is read whole before its hash is recorded.

Each benchmark file without a published checksum is trusted on first use (``ir_datasets_ext.download``). A wrong
file put where it belongs (another split, another benchmark's file, a cut-off copy) must be refused by the
dataset's reader and leave nothing behind: no recorded hash and no stamp, so that the right file put there
afterwards is accepted without any clean-up.
"""

from __future__ import annotations

import json
import os
import re

import dataset_fixtures as fx
import ir_datasets
import pytest

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import boolquestions, dureader_retrieval, excluir, nevir
from ir_datasets_ext.util import FormatError


def _first(iterator):
    return next(iter(iterator))


#: (file below the mirror, its download, the writer of the benchmark's right files, wrong bytes, a read of it)
CASES = {
    "nevir-test": ("nevir/test.jsonl", nevir._FILES["test"].release, fx.write_nevir,
                   b'{"query": "not a NevIR pair", "text": "x"}\n',
                   lambda: list(ir_datasets.load("nevir/test").queries_iter())),
    "nevir-train-cut-off": ("nevir/train.jsonl", nevir._FILES["train"], fx.write_nevir,
                            b'{"id": "0", "q1": "a", "q2": "b", "doc1": "c"',
                            lambda: list(ir_datasets.load("nevir/train").qrels_iter())),
    "excluir-corpus": ("excluir/corpus.json", excluir._CORPUS, fx.write_excluir, b'{"0": "not an array"}',
                       lambda: _first(ir_datasets.load("excluir").docs_iter())),
    "excluir-test": ("excluir/test_manual_final.json", excluir._TEST.release, fx.write_excluir,
                     json.dumps([{"question": "no RQ_rewrite"}]).encode(),
                     lambda: list(ir_datasets.load("excluir/test").queries_iter())),
    "boolquestions-eval": ("boolquestions/MSMARCO/eval.json", boolquestions._FILES["msmarco"]["eval"],
                           fx.write_boolquestions, json.dumps([{"qid": 1, "question": "x"}]).encode(),
                           lambda: list(ir_datasets.load("boolquestions/msmarco").queries_iter())),
    "boolquestions-corpus": ("boolquestions/NaturalQuestions/corpus.jsonl",
                             boolquestions._FILES["nq"]["corpus"], fx.write_boolquestions,
                             b'{"_id": "1", "text": "a BEIR corpus line"}\n',
                             lambda: _first(ir_datasets.load("boolquestions/nq").docs_iter())),
    "dureader-tarball": ("dureader_retrieval/dureader-retrieval-baseline-dataset.tar.gz", dureader_retrieval._TARBALL,
                         fx.write_du_tarball, b"not a tarball at all",
                         lambda: list(ir_datasets.load("dureader-retrieval/dev").queries_iter())),
}


def _recorded(home) -> dict:
    path = home / "ir_datasets_ext.hashes.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_file_is_refused_and_the_right_one_then_accepted(case, mirror, isolated_ir_datasets_home):
    relative, download, write_release, wrong, read = CASES[case]
    write_release(mirror)
    path = mirror / relative
    right = path.read_bytes()
    path.write_bytes(wrong)
    with pytest.raises(FormatError, match=re.escape(path.name)):
        read()
    assert download.key not in _recorded(isolated_ir_datasets_home)
    assert not download.stamp_path.exists() and not download.cache_path.exists()

    path.write_bytes(right)
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # as a real copy gets a new time
    assert read()
    assert download.key in _recorded(isolated_ir_datasets_home)
