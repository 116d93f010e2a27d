"""Pinned, verified downloads of the benchmarks' files (``etc/downloads.json``), read from an offline mirror where one
is set; how files are verified, stamped and trusted on first use: docs/architecture.md ("Downloads")."""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import json
import os
import pkgutil
import re
import tempfile
import zipfile
from pathlib import Path

import ir_datasets

from .disk import check_free_space, give_usual_permissions

__all__ = [
    "MIRROR_ENV",
    "DownloadError",
    "ChecksumError",
    "VerifiedDownload",
    "DOWNLOADS_FILE",
    "download_entry",
    "benchmark_folders",
    "pinned_download",
    "mirror_root",
    "remove_stale_temporaries",
    "ZipMember",
]

MIRROR_ENV = "IR_DATASETS_EXT_MIRROR"
_HASHES_FILE = "ir_datasets_ext.hashes.json"
_CHUNK = 1 << 20


#: The one data file of every download location, checksum and size (package data, as ir_datasets' own).
DOWNLOADS_FILE = "etc/downloads.json"

#: Fields of an entry of :data:`DOWNLOADS_FILE`: type, and a pattern a text must match.
_ENTRY_FIELDS = {
    "url": (str, r"https?://\S+"),
    "expected_md5": (str, r"[0-9a-f]{32}"),
    "expected_sha256": (str, r"[0-9a-f]{64}"),
    "size": (int, None),
    "derived_from": (str, r"\S.*"),
    "origin": (str, r"\S.*"),
    "note": (str, None),
}
#: What a derived copy's entry must have beyond a URL (its bytes are pinned, never trusted on first use).
_DERIVED_FIELDS = ("expected_sha256", "size", "origin")


@functools.cache
def _downloads() -> dict[str, dict[str, dict]]:
    """:data:`DOWNLOADS_FILE`, read once and checked (a ValueError names the entry and the field)."""
    where = f"ir_datasets_ext/{DOWNLOADS_FILE}"
    try:
        data = json.loads(pkgutil.get_data("ir_datasets_ext", DOWNLOADS_FILE).decode("utf-8"))
    except ValueError as error:
        raise ValueError(f"{where}: not valid JSON ({error})") from None
    return check_downloads(data, where)


def check_downloads(data, where: str) -> dict[str, dict[str, dict]]:
    """``data`` (the parsed :data:`DOWNLOADS_FILE`) when every entry is well formed; else a one-line ValueError."""
    if not isinstance(data, dict) or not all(isinstance(files, dict) for files in data.values()):
        raise ValueError(f"{where}: expected an object of benchmark folders, each an object of files")
    for benchmark, files in data.items():
        for file, entry in files.items():
            name = f"{where}: {benchmark}/{file}"
            if not isinstance(entry, dict) or "url" not in entry:
                raise ValueError(f"{name}: expected an object with at least a url")
            for key, value in entry.items():
                if key not in _ENTRY_FIELDS:
                    raise ValueError(f"{name}: unknown field {key!r} (known: {', '.join(_ENTRY_FIELDS)})")
                kind, pattern = _ENTRY_FIELDS[key]
                if not isinstance(value, kind) or isinstance(value, bool) \
                        or (kind is int and value < 0) or (pattern and not re.fullmatch(pattern, value)):
                    expected = "a non-negative integer" if kind is int else f"text matching {pattern or 'anything'}"
                    raise ValueError(f"{name}: {key} is {value!r}, expected {expected}")
            missing = [key for key in _DERIVED_FIELDS if "derived_from" in entry and key not in entry]
            if missing:
                raise ValueError(f"{name}: a derived copy needs {', '.join(missing)}")
    return data


def benchmark_folders() -> list[str]:
    """The folders of the benchmarks' files, in the mirror and in the cache (``comlq``, ``dureader_retrieval``, ...)."""
    return list(_downloads())


def download_entry(benchmark: str, file: str) -> dict:
    """The entry of ``<benchmark>/<file>`` in :data:`DOWNLOADS_FILE` (``url``, checksums, size, ...)."""
    try:
        return dict(_downloads()[benchmark][file])
    except KeyError:
        raise KeyError(f"{benchmark}/{file} is not in ir_datasets_ext/{DOWNLOADS_FILE}") from None


def pinned_download(benchmark: str, file: str, source=None, validate=None) -> VerifiedDownload:
    """The :class:`VerifiedDownload` of ``<benchmark>/<file>`` as :data:`DOWNLOADS_FILE` pins it; a file without a
    checksum needs a ``validate``."""
    entry = download_entry(benchmark, file)
    if validate is None and "expected_md5" not in entry and "expected_sha256" not in entry:
        raise ValueError(f"{benchmark}/{file} has no checksum in ir_datasets_ext/{DOWNLOADS_FILE}: its dataset "
                         "module must give a validate, so that no file is trusted on first use unread")
    return VerifiedDownload(benchmark=benchmark, file=file, url=entry["url"], md5=entry.get("expected_md5"),
                            sha256=entry.get("expected_sha256"), size=entry.get("size"), source=source,
                            validate=validate)


class DownloadError(OSError):
    """A source file could not be obtained (missing in the mirror, network failure)."""


class ChecksumError(DownloadError):
    """A source file does not have the expected size or checksum (truncated or altered)."""


def mirror_root() -> Path | None:
    """The local mirror directory named by ``IR_DATASETS_EXT_MIRROR``, or ``None``."""
    value = os.environ.get(MIRROR_ENV)
    return Path(value).expanduser() if value else None


def _recorded_hashes_path() -> Path:
    return ir_datasets.util.home_path() / _HASHES_FILE


def _read_recorded_hashes() -> dict[str, str]:
    path = _recorded_hashes_path()
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise DownloadError(f"{path}: cannot read recorded file hashes ({error})") from error


def _write_small_json(path: Path, record) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temporaries(target: Path) -> None:
    """Remove the ``<target>.<pid>[.<random>].tmp`` files whose writing process no longer runs."""
    for tmp in target.parent.glob(f"{glob.escape(target.name)}.*.tmp"):
        pid = tmp.name[len(target.name) + 1:].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue
        tmp.unlink(missing_ok=True)  # missing: removed by a concurrent clean-up


def _copy_digests(src, out=None) -> tuple[int, str, str]:
    """``(size, md5, sha256)`` of the rest of stream ``src``, copied into ``out`` where given."""
    md5, sha256, size = hashlib.md5(), hashlib.sha256(), 0
    while chunk := src.read(_CHUNK):
        if out is not None:
            out.write(chunk)
        md5.update(chunk)
        sha256.update(chunk)
        size += len(chunk)
    return size, md5.hexdigest(), sha256.hexdigest()


def _file_digests(path: Path) -> tuple[int, str, str]:
    with open(path, "rb") as f:
        return _copy_digests(f)


class VerifiedDownload:
    """One source file of a benchmark, pinned to a URL and verified before use, as an ir_datasets streamer;
    ``validate(path, source)`` reads a file without a known checksum before its hash is trusted, ``source(url)``
    fetches the URL (default: ir_datasets' ``RequestsDownload``)."""

    def __init__(self, benchmark, file, url, md5=None, sha256=None, size=None, source=None, validate=None):
        self.benchmark = benchmark
        self.file = file
        self.url = url
        self.md5 = md5
        self.sha256 = sha256
        self.size = size
        self._source = source
        self._validate = validate

    def __repr__(self):
        return f"VerifiedDownload({self.benchmark}/{self.file})"

    @property
    def cache_path(self) -> Path:
        return ir_datasets.util.home_path() / self.benchmark / self.file

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.file}@{self.url}"

    def mirror_path(self) -> Path | None:
        root = mirror_root()
        return None if root is None else root / self.benchmark / self.file

    @property
    def stamp_path(self) -> Path:
        target = self.cache_path
        return target.with_name(f".{target.name}.verified")

    def path(self, force=True) -> Path:
        """The verified file: the mirror file itself, or the copy in the cache (fetched when ``force``); a damaged
        cached copy is replaced."""
        target = self.cache_path
        mirror_file = self.mirror_path()
        if not force:
            return mirror_file if mirror_file is not None and mirror_file.is_file() else target
        damage = self._damage(target) if target.exists() else None
        if target.exists() and damage is None:
            return target
        try:
            if mirror_file is not None:
                self._verify_in_place(mirror_file)
                target.unlink(missing_ok=True)  # a damaged copy gives way to the verified mirror file
                return mirror_file
            self._fetch(target)
        except DownloadError as error:
            if damage is None:
                raise
            raise ChecksumError(f"{target}: the cached copy of {self.benchmark}/{self.file} is damaged "
                                f"({damage}) and cannot be fetched again ({error}); delete {target} and "
                                f"retry once the source is reachable") from None
        return target

    def _verify_in_place(self, mirror_file: Path) -> None:
        """Verify the mirror file where it is, unless its stamp says it was verified as it is now."""
        if not mirror_file.is_file():
            raise self._not_in_mirror(mirror_file)
        remove_stale_temporaries(self.cache_path)  # a copy a killed process left half-way
        self._verify_unless_stamped(mirror_file, source=str(mirror_file.absolute()))

    def _verify_unless_stamped(self, path: Path, source: str | None = None) -> None:
        """Verify the file at ``path`` (the mirror file read from ``source``, or the cached copy) unless its stamp
        says it was verified as it is now; then stamp it."""
        info = path.stat()
        if self.size is not None and info.st_size != self.size:  # refused without reading it
            raise ChecksumError(f"{path}: {info.st_size:,} bytes, expected {self.size:,} for {self.benchmark}/"
                                f"{self.file} (truncated or a different version?)")
        stamp = self._read_stamp()  # none or a damaged one: verify the bytes
        if stamp.get("source") == source and stamp.get("size") == info.st_size \
                and stamp.get("mtime_ns") == info.st_mtime_ns:
            return
        size, md5, sha256 = _file_digests(path)
        self._verify(str(path), size, md5, sha256, path)
        # the stat taken before reading: a file changed while it was read no longer matches its stamp
        self._write_stamp(info, sha256, source)

    def _not_in_mirror(self, mirror_file: Path) -> DownloadError:
        return DownloadError(f"{mirror_file}: not found; {MIRROR_ENV}={mirror_root()} is set, so "
                             f"{self.benchmark}/{self.file} is read from there (originally {self.url})")

    def _read_stamp(self) -> dict:
        try:
            stamp = json.loads(self.stamp_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return stamp if isinstance(stamp, dict) else {}

    def _damage(self, target: Path) -> str | None:
        """Why the cached ``target`` is not the verified file, or ``None`` when it is."""
        info = target.stat()
        if self.size is not None and info.st_size != self.size:
            return f"{info.st_size:,} bytes, expected {self.size:,}"
        try:
            self._verify_unless_stamped(target)
        except (ChecksumError, ValueError) as error:  # ValueError: not the benchmark's file (validate)
            return str(error)
        return None

    def _write_stamp(self, info: os.stat_result, sha256: str, source: str | None = None) -> None:
        stamp = {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": sha256}
        if source is not None:
            stamp["source"] = source
        _write_small_json(self.stamp_path, stamp)

    @contextlib.contextmanager
    def stream(self):
        with open(self.path(), "rb") as f:
            yield f

    @contextlib.contextmanager
    def _open_source(self):
        if self._source is not None:
            remote = self._source(self.url)
        else:
            from ir_datasets.util.download import RequestsDownload

            remote = RequestsDownload(self.url)
        import http.client

        try:
            with remote.stream() as f:
                yield f
        except DownloadError:
            raise
        except (OSError, http.client.HTTPException) as error:  # requests' and socket errors are OSErrors
            raise DownloadError(
                f"{self.url}: download of {self.benchmark}/{self.file} failed ({error}); "
                f"on a machine without network set {MIRROR_ENV} to a local mirror") from error

    def _fetch(self, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(target)
        if self.size is not None:
            check_free_space(target.parent, self.size, f"the download of {self.benchmark}/{self.file}")
        fd, tmp_name = tempfile.mkstemp(prefix=f"{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out, self._open_source() as src:
                size, md5, sha256 = _copy_digests(src, out)
            self._verify(self.url, size, md5, sha256, tmp)
            give_usual_permissions(tmp)  # mkstemp makes 0600: readable by the group and others, as ir_datasets'
            os.replace(tmp, target)
            self._write_stamp(target.stat(), sha256)
        finally:
            tmp.unlink(missing_ok=True)

    def _verify(self, origin: str, size: int, md5: str, sha256: str, path: Path) -> None:
        """Check the file at ``path`` (named ``origin``) against the known size and checksums, or else against the
        hash recorded at its first use; a file seen for the first time is validated before its hash is recorded."""
        if self.size is not None and size != self.size:
            raise ChecksumError(
                f"{origin}: {size:,} bytes, expected {self.size:,} for {self.benchmark}/{self.file} "
                f"(truncated or a different version?)")
        if self.md5 is not None and md5 != self.md5:
            raise ChecksumError(f"{origin}: md5 {md5}, expected {self.md5} for {self.benchmark}/{self.file}")
        if self.sha256 is not None and sha256 != self.sha256:
            raise ChecksumError(
                f"{origin}: sha256 {sha256}, expected {self.sha256} for {self.benchmark}/{self.file}")
        if self.md5 is None and self.sha256 is None:
            recorded = _read_recorded_hashes().get(self.key)
            if recorded is None:
                if self._validate is not None:
                    self._validate(path, origin)  # a file that is not the benchmark's is never trusted
                _write_small_json(_recorded_hashes_path(), {**_read_recorded_hashes(), self.key: sha256})
            elif recorded != sha256:
                hashes = _recorded_hashes_path()
                raise ChecksumError(
                    f"{origin}: sha256 {sha256}, but {recorded} was recorded at the first download of "
                    f"{self.benchmark}/{self.file} (in {hashes}); if this file is the right one, remove the entry "
                    f"{self.key!r} from {hashes}")


class ZipMember:
    """One member of a verified zip file, as a streamer: ir_datasets' ``ZipExtract`` without the log lines it
    writes each time a member is opened (which stock tools would print for the suite's datasets)."""

    def __init__(self, download, member: str):
        self.download = download
        self.member = member

    def path(self, force=True):
        return self.download.path(force)

    @contextlib.contextmanager
    def stream(self):
        with zipfile.ZipFile(self.path()) as archive, archive.open(self.member) as member:
            yield member
