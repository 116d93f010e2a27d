"""What the suite writes into the ir_datasets cache and its outputs gets the permissions of plain ``open``/``mkdir``.

``tempfile.mkstemp``/``mkdtemp`` make ``0600``/``0700``; stock ir_datasets' cache is ``0666``/``0777`` less the
umask, so a lab can share one ``IR_DATASETS_HOME``. The umasks tested (``027``, ``002``) give modes that
neither the temporary-file modes nor fixed ``0644``/``0755`` would match.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
from pathlib import Path

import dataset_fixtures as fx
import ir_datasets
import pytest

from ir_datasets_ext.disk import give_usual_permissions, umask
from ir_datasets_ext.download import VerifiedDownload

DEMO = "negplugins-demo"


@pytest.fixture(params=[0o027, 0o002], ids=["umask027", "umask002"])
def process_umask(request):
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def _wrong_modes(root: Path, mask: int, itself: bool = True) -> list[str]:
    """Every file and folder below ``root`` (and ``root`` itself) whose permission bits are not the usual ones."""
    wrong = []
    for path in [root, *root.rglob("*")][0 if itself else 1:]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        want = (0o777 if path.is_dir() else 0o666) & ~mask
        if mode != want:
            wrong.append(f"{path.relative_to(root)}: {mode:o}, expected {want:o}")
    return wrong


def test_umask_is_read_without_changing_it(process_umask):
    assert umask() == process_umask and umask() == process_umask


def test_give_usual_permissions(tmp_path, process_umask):
    import tempfile

    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    _, name = tempfile.mkstemp(dir=folder)
    (folder / "sub").mkdir(mode=0o700)
    give_usual_permissions(folder, recursive=True)
    assert _wrong_modes(folder, process_umask) == []


def test_the_cache_is_shareable(mirror, isolated_ir_datasets_home, process_umask, monkeypatch, tmp_path):
    # a download from the URL, copied into the cache
    content = b"downloaded bytes\n"

    class Remote:
        def __init__(self, url):
            pass

        @contextlib.contextmanager
        def stream(self):
            yield io.BytesIO(content)

    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR")
    VerifiedDownload("bench", "sub/file.bin", "https://example.invalid/f", source=Remote).path()
    assert hashlib.sha256(content).hexdigest() in (isolated_ir_datasets_home / "ir_datasets_ext.hashes.json").read_text()
    # mirror files used in place (stamps), a docstore, the DuReader baseline extracted from its tarball
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(mirror))
    fx.write_du_tarball(mirror)
    assert len(list(ir_datasets.load("dureader-retrieval").docs_iter())) > 0
    assert ir_datasets.load(DEMO).docs_store().get("d01").doc_id == "d01"
    # the document id cache of run validation
    from negplugins.evaluation.validation import validate_run

    run = tmp_path / "run.trec"
    run.write_text("q01 Q0 d01 1 3.0 t\n")
    assert validate_run(DEMO, run).valid

    written = {p.relative_to(isolated_ir_datasets_home).as_posix() for p in isolated_ir_datasets_home.rglob("*")}
    assert {"bench/sub/file.bin", "dureader_retrieval/baseline", "negplugins/docids/negplugins-demo.npz"} <= written
    assert any(name.endswith(".verified") for name in written)
    assert _wrong_modes(isolated_ir_datasets_home, process_umask, itself=False) == []  # made by pytest


@pytest.mark.java
def test_indexes_and_runs_are_shareable(tmp_path, process_umask, monkeypatch, minilm_encoder):
    from negplugins.runners.bm25 import bm25_search
    from negplugins.runners.dense import dense_index
    from negplugins.runners.lucene_index import lucene_index

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    lucene, _ = lucene_index(DEMO, out / "lucene")
    bm25_search(DEMO, out / "runs" / "bm25.trec", index=lucene, hits=5)
    dense_index(DEMO, index=out / "faiss", progress=False, encoder=minilm_encoder)
    dense_index(DEMO, index=out / "faiss-shards", shard_num=2, search_shards=True, progress=False,
                encoder=minilm_encoder)
    names = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert {"lucene/negplugins-index.json", "runs/bm25.trec", "runs/bm25.meta.json", "faiss/index",
            "faiss-shards/shard-00001-of-00002/index"} <= names
    assert any(name.startswith("lucene/segments_") for name in names)
    assert _wrong_modes(out, process_umask) == []

