"""Free disk is checked before each large step: one clear error naming the folder, the space needed and available.

The steps run against a real 1 MiB tmpfs (``mount -t tmpfs -o size=1m``), which needs root and the right to
mount: elsewhere those tests are skipped, and :func:`test_message_names_folder_needed_and_available` checks
the rule itself with ``shutil.disk_usage`` monkeypatched.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import ir_datasets
import pytest

from ir_datasets_ext import disk
from ir_datasets_ext.disk import DiskSpaceError, check_free_space
from ir_datasets_ext.download import VerifiedDownload
from negplugins.errors import OutputError

ROOT = Path(__file__).resolve().parents[1]
DEMO = "negplugins-demo"
_Usage = namedtuple("_Usage", "total used free")


def test_message_names_folder_needed_and_available(tmp_path, monkeypatch):
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda path: _Usage(10 << 30, 9 << 30, 3 << 20))
    target = tmp_path / "not" / "yet" / "there"  # measured at its nearest existing parent
    check_free_space(target, 3 << 20, "a step")  # exactly enough
    with pytest.raises(DiskSpaceError) as error:
        check_free_space(target, 5 << 20, "the Lucene index of comlq")
    assert str(error.value) == (f"{target}: not enough free disk space for the Lucene index of comlq: about 5.0 MiB "
                                f"needed, 3.0 MiB available; free some space or choose another folder "
                                f"(IR_DATASETS_SKIP_DISK_FREE=true skips this check)")
    monkeypatch.setenv("IR_DATASETS_SKIP_DISK_FREE", "true")  # the switch of stock ir_datasets' own check
    check_free_space(target, 5 << 20, "the Lucene index of comlq")


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs mounted on a fresh folder (skipped where mounting is not permitted)."""
    folder = tmp_path / "small"
    folder.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here ({mounted.stderr.decode(errors='replace').strip()})")
    try:
        assert shutil.disk_usage(folder).total <= 1 << 20
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_download_larger_than_the_disk(small_disk, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(small_disk / "home"))

    class Remote:
        def __init__(self, url):
            pass

        @contextlib.contextmanager
        def stream(self):
            raise AssertionError("nothing is fetched without room for it")
            yield io.BytesIO()

    download = VerifiedDownload("bench", "corpus.jsonl", "https://example.invalid/c", size=2 << 20, source=Remote)
    with pytest.raises(DiskSpaceError, match=rf"^{small_disk}/home/bench: not enough free disk space for the download "
                                             rf"of bench/corpus\.jsonl: about 2\.0 MiB needed, .* available"):
        download.path()
    assert not [name for name in _files(small_disk) if name.endswith((".tmp", "corpus.jsonl"))]


def test_docstore_larger_than_the_disk(small_disk, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(small_disk / "home"))
    with pytest.raises(DiskSpaceError, match=rf"^{small_disk}/home/negplugins-demo/docs\.pklz4: not enough free "
                                             rf"disk space for the docstore of negplugins-demo: about 16\.\d MiB"):
        ir_datasets.load(DEMO).docs_store().get("d01")
    assert not [name for name in _files(small_disk) if "/bin" in name or name.endswith(("bin", "idx"))]


@pytest.mark.java
def test_lucene_index_larger_than_the_disk(small_disk):
    from negplugins.runners.lucene_index import lucene_index

    with pytest.raises(OutputError, match=rf"^{small_disk}: not enough free disk space for the Lucene index of "
                                          rf"negplugins-demo: about 4\.\d MiB needed, .* available"):
        lucene_index(DEMO, small_disk / "idx")
    assert _files(small_disk) == []
    # the command line: one line, status 2, no traceback
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "negplugins", "index", DEMO, "--index", str(small_disk / "idx")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(
        f"negplugins: error: {small_disk}: not enough free disk space for the Lucene index of negplugins-demo")


def test_faiss_index_larger_than_the_disk(small_disk):
    from negplugins.runners.dense import dense_index

    # 36 vectors of 384 float32 (55 KiB) and the ids fit, but not with the 1 MiB allowance for faiss's file
    with pytest.raises(OutputError, match=rf"^{small_disk}/idx\.shards: not enough free disk space for shard 1/1 of "
                                          rf"the faiss index {small_disk}/idx: about 1\.\d MiB needed"):
        dense_index(DEMO, index=small_disk / "idx", progress=False)
    assert _files(small_disk) == []
