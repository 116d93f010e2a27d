"""Assertions shared by the dataset tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ir_datasets_ext.download import ChecksumError


def assert_trust_on_first_use(mirror_file: Path, cache_file: Path, fetch) -> None:
    """The first fetch records the hash; a changed source is then rejected and nothing is cached; the
    original file is accepted again."""
    fetch()
    assert cache_file.is_file()
    original = mirror_file.read_bytes()
    mirror_file.write_bytes(original[:-1] + (b"X" if original[-1:] != b"X" else b"Y"))
    cache_file.unlink()
    with pytest.raises(ChecksumError) as error:
        fetch()
    assert mirror_file.name in str(error.value)
    assert not cache_file.exists()
    assert [p.name for p in cache_file.parent.iterdir() if p.name.startswith(cache_file.name)] == []
    mirror_file.write_bytes(original)  # fixing the source makes a retry work without clean-up
    fetch()
    assert cache_file.is_file()


def qrels_dict(dataset):
    result = {}
    for qrel in dataset.qrels_iter():
        result.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    return result


def fresh_home(monkeypatch, tmp_path_factory):
    """Point ``IR_DATASETS_HOME`` at a new empty folder (a fresh cache and no recorded hashes), so a test
    can present a second version of a fixture file."""
    home = tmp_path_factory.mktemp("ir_datasets_home")
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    return home
