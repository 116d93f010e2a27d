"""Assertions shared by the dataset tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ir_datasets_ext.download import ChecksumError


def assert_trust_on_first_use(mirror_file: Path, cache_file: Path, fetch) -> None:
    """The first fetch verifies the mirror file in place and records its hash (no copy in the cache); a changed
    source is then rejected and nothing is cached; the original file is accepted again."""
    fetch()
    assert not cache_file.exists()  # read where it is, never copied
    stamp = json.loads(cache_file.with_name(f".{cache_file.name}.verified").read_text())
    assert stamp["source"] == str(mirror_file.absolute())
    original, info = mirror_file.read_bytes(), mirror_file.stat()
    mirror_file.write_bytes(original[:-1] + (b"X" if original[-1:] != b"X" else b"Y"))
    # a later modification time, as any real edit gets (the stamp compares it; coarse clocks may repeat one)
    os.utime(mirror_file, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))
    with pytest.raises(ChecksumError) as error:
        fetch()
    assert mirror_file.name in str(error.value)
    assert not cache_file.exists()
    assert [p.name for p in cache_file.parent.iterdir() if p.name.startswith(cache_file.name)] == []
    mirror_file.write_bytes(original)  # fixing the source makes a retry work without clean-up
    os.utime(mirror_file, ns=(info.st_atime_ns, info.st_mtime_ns + 2 * 10**9))
    fetch()
    assert not cache_file.exists()


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


def pin_derived_copy(monkeypatch, streamer, path: Path) -> None:
    """Make ``streamer`` (a :class:`~ir_datasets_ext.derived.ReleaseOrDerived`) accept the fixture copy at ``path``.

    The suite pins the real copy's size and SHA-256; a fixture written in its format has others, so the pins are
    replaced for the test (the record every output shows changes with them).
    """
    import dataclasses
    import hashlib

    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    monkeypatch.setattr(streamer, "derived", dataclasses.replace(streamer.derived, sha256=sha256, size=len(data)))
    monkeypatch.setattr(streamer.copy, "sha256", sha256)
    monkeypatch.setattr(streamer.copy, "size", len(data))
