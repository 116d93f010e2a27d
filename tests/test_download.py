"""VerifiedDownload: mirror layout, mirror files used in place, checksums, trust on first use, atomic cache writes."""

import contextlib
import hashlib
import io
import json
import os
from pathlib import Path

import pytest

from ir_datasets_ext import download as download_module
from ir_datasets_ext.download import ChecksumError, DownloadError, VerifiedDownload


def _download(**kwargs):
    defaults = dict(benchmark="bench", file="sub/data.txt", url="https://example.invalid/data.txt")
    defaults.update(kwargs)
    return VerifiedDownload(**defaults)


def _write(mirror, content: bytes):
    path = mirror / "bench" / "sub" / "data.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def _cache_files(home):
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())


def _later_mtime(path, seconds):
    """Give ``path`` a modification time ``seconds`` later, as a real edit gets (coarse clocks may repeat one)."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + seconds * 10**9))


def test_mirror_file_is_verified_and_used_in_place(mirror, isolated_ir_datasets_home, monkeypatch):
    content = b"hello\n"
    source = _write(mirror, content)
    download = _download(md5=hashlib.md5(content).hexdigest(), sha256=hashlib.sha256(content).hexdigest(), size=6)
    path = download.path()
    assert path == source  # the mirror file itself: no second copy of a corpus in the cache
    with download.stream() as f:
        assert f.read() == content
    assert _cache_files(isolated_ir_datasets_home) == ["bench/sub/.data.txt.verified"]
    stamp = json.loads(download.stamp_path.read_text())
    assert stamp == {"size": 6, "mtime_ns": source.stat().st_mtime_ns, "sha256": hashlib.sha256(content).hexdigest(),
                     "source": str(source)}

    # verified once: later uses compare size and modification time with the stamp, without reading the file
    reads = []
    real = download_module._file_digests
    monkeypatch.setattr(download_module, "_file_digests", lambda p: (reads.append(p), real(p))[1])
    assert download.path() == source and reads == []

    # changed after its verification: read again, refused, and nothing is cached
    source.write_bytes(b"HELLO\n")
    _later_mtime(source, 1)
    with pytest.raises(ChecksumError, match=rf"{source}: md5 .* expected"):
        download.path()
    assert reads == [source]
    assert _cache_files(isolated_ir_datasets_home) == ["bench/sub/.data.txt.verified"]
    source.write_bytes(content)
    _later_mtime(source, 2)
    assert download.path() == source and download.path().read_bytes() == content


def test_a_good_cached_copy_is_used_and_a_damaged_one_gives_way_to_the_mirror(mirror, isolated_ir_datasets_home,
                                                                               monkeypatch):
    content = b"hello\n"
    checks = dict(sha256=hashlib.sha256(content).hexdigest(), size=6)

    class Remote:  # the pinned URL, fetched into the cache when there is no mirror
        def __init__(self, url):
            pass

        @contextlib.contextmanager
        def stream(self):
            yield io.BytesIO(content)

    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR")
    cached = _download(source=Remote, **checks).path()
    assert cached == isolated_ir_datasets_home / "bench" / "sub" / "data.txt" and cached.read_bytes() == content
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(mirror))
    source = _write(mirror, content)
    assert _download(**checks).path() == cached  # a verified copy already in the cache is used
    cached.write_bytes(b"HELLO\n")
    assert _download(**checks).path() == source  # a damaged one is removed, the mirror file used in place
    assert _cache_files(isolated_ir_datasets_home) == ["bench/sub/.data.txt.verified"]


@pytest.mark.parametrize("field, value, message", [
    ("size", 7, "6 bytes, expected 7"),
    ("md5", "0" * 32, "md5 .* expected 0{32}"),
    ("sha256", "f" * 64, "sha256 .* expected f{64}"),
])
def test_mismatch_leaves_nothing_in_the_cache(mirror, isolated_ir_datasets_home, field, value, message):
    source = _write(mirror, b"hello\n")
    with pytest.raises(ChecksumError, match=f"{source}: {message}"):
        _download(**{field: value}).path()
    assert _cache_files(isolated_ir_datasets_home) == []


def test_trust_on_first_use(mirror, isolated_ir_datasets_home):
    source = _write(mirror, b"version 1\n")
    download = _download()
    assert download.path() == source
    source.write_bytes(b"version 2\n")  # a later verification must match the recorded hash
    _later_mtime(source, 1)
    with pytest.raises(ChecksumError, match="was recorded at the first download"):
        _download().path()
    assert not download.cache_path.exists()
    source.write_bytes(b"version 1\n")
    _later_mtime(source, 2)
    assert _download().path().read_bytes() == b"version 1\n"


def test_missing_in_mirror(mirror):
    with pytest.raises(DownloadError, match=r"bench/sub/data\.txt: not found"):
        _download().path()


def test_network_failure_is_a_download_error(isolated_ir_datasets_home):
    class Broken:
        def __init__(self, url):
            pass

        def stream(self):
            raise ConnectionError("no route to host")

    with pytest.raises(DownloadError, match="example.invalid/data.txt: download of bench/sub/data.txt failed"):
        _download(source=Broken).path()
    assert list((isolated_ir_datasets_home / "bench" / "sub").iterdir()) == []


class _Remote:
    """The pinned URL, serving whatever ``_Remote.content`` holds at the time."""

    content = b""

    def __init__(self, url):
        pass

    @contextlib.contextmanager
    def stream(self):
        yield io.BytesIO(_Remote.content)


def _expect_hello(calls):
    def validate(path, source):
        calls.append(source)
        if Path(path).read_bytes() != b"hello\n":
            raise ValueError(f"{source}:1: not the benchmark's file")

    return validate


def test_a_download_trusted_on_first_use_is_validated_before_it_is_cached_or_recorded(isolated_ir_datasets_home,
                                                                                      monkeypatch):
    calls = []
    download = _download(source=_Remote, validate=_expect_hello(calls))
    monkeypatch.setattr(_Remote, "content", b"<html>an error page</html>\n")
    with pytest.raises(ValueError, match=r"^https://example.invalid/data.txt:1: not the benchmark's file"):
        download.path()
    assert _cache_files(isolated_ir_datasets_home) == []  # no copy, no stamp, no recorded hash
    monkeypatch.setattr(_Remote, "content", b"hello\n")
    assert download.path().read_bytes() == b"hello\n"
    assert json.loads((isolated_ir_datasets_home / "ir_datasets_ext.hashes.json").read_text()) == {
        download.key: hashlib.sha256(b"hello\n").hexdigest()}
    assert len(calls) == 2 and download.path() == download.cache_path and len(calls) == 2  # validated once


def test_a_mirror_file_trusted_on_first_use_is_recorded_only_once_validated(mirror, isolated_ir_datasets_home):
    calls = []
    source = _write(mirror, b"hello, but another file\n")
    with pytest.raises(ValueError, match=rf"^{source}:1: not the benchmark's file"):
        _download(validate=_expect_hello(calls)).path()
    assert _cache_files(isolated_ir_datasets_home) == []
    source.write_bytes(b"hello\n")
    _later_mtime(source, 1)
    assert _download(validate=_expect_hello(calls)).path() == source
    assert calls == [str(source)] * 2


def test_a_cached_copy_never_validated_gives_way_to_the_right_file(isolated_ir_datasets_home, monkeypatch):
    download = _download(source=_Remote, validate=_expect_hello([]))
    download.cache_path.parent.mkdir(parents=True)
    download.cache_path.write_bytes(b"a copy left without its hash recorded\n")
    monkeypatch.setattr(_Remote, "content", b"hello\n")
    assert download.path().read_bytes() == b"hello\n"
