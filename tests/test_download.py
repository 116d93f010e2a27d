"""VerifiedDownload: mirror layout, checksums, trust on first use, atomic cache writes."""

import hashlib

import pytest

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


def test_mirror_file_is_verified_and_cached(mirror, isolated_ir_datasets_home):
    content = b"hello\n"
    _write(mirror, content)
    download = _download(md5=hashlib.md5(content).hexdigest(), sha256=hashlib.sha256(content).hexdigest(), size=6)
    path = download.path()
    assert path == isolated_ir_datasets_home / "bench" / "sub" / "data.txt"
    assert path.read_bytes() == content
    with download.stream() as f:
        assert f.read() == content


@pytest.mark.parametrize("field, value, message", [
    ("size", 7, "6 bytes, expected 7"),
    ("md5", "0" * 32, "md5 .* expected 0{32}"),
    ("sha256", "f" * 64, "sha256 .* expected f{64}"),
])
def test_mismatch_leaves_nothing_in_the_cache(mirror, isolated_ir_datasets_home, field, value, message):
    _write(mirror, b"hello\n")
    with pytest.raises(ChecksumError, match=message):
        _download(**{field: value}).path()
    assert list((isolated_ir_datasets_home / "bench" / "sub").iterdir()) == []


def test_trust_on_first_use(mirror, isolated_ir_datasets_home):
    source = _write(mirror, b"version 1\n")
    download = _download()
    download.path()
    download.cache_path.unlink()  # a later re-download must match the recorded hash
    source.write_bytes(b"version 2\n")
    with pytest.raises(ChecksumError, match="was recorded at the first download"):
        _download().path()
    assert not download.cache_path.exists()
    source.write_bytes(b"version 1\n")
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
