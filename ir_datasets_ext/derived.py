"""Derived copies: another project's copy of a release file, read only where the release is not; pinned by size and
SHA-256, and named by every output (docs/formats.md)."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

from .download import MIRROR_ENV, ChecksumError, DownloadError, VerifiedDownload, download_entry, mirror_root

__all__ = ["DERIVED", "DataOrigin", "ReleaseOrDerived", "DataOrigins", "OriginDocumentation"]

#: :attr:`DataOrigin.kind` of a copy derived from the release (the words every output shows).
DERIVED = "derived copy"


@dataclass(frozen=True)
class DataOrigin:
    """A file a dataset reads that is not the benchmark's own release: the copy at ``<mirror>/<benchmark>/<path>``
    standing in for the release file ``replaces``, taken from ``source`` (repository, commit and path)."""

    benchmark: str
    path: str
    replaces: str
    sha256: str
    size: int
    source: str
    url: str
    note: str = ""
    kind: str = DERIVED

    @property
    def file(self) -> str:
        """The copy in the mirror's layout: ``nevir/derived/NevIR_test_final.json``."""
        return f"{self.benchmark}/{self.path}"

    def describe(self) -> str:
        """One line: what the data was read from, its SHA-256 and source (shown by every output)."""
        return (f"{self.kind} {self.file} (sha256 {self.sha256}; from {self.source}), not the release's "
                f"{self.benchmark}/{self.replaces}")

    def to_dict(self) -> dict:
        """The record sidecars, evaluations, report cards and leaderboards store: every field and :attr:`file`."""
        return dict(sorted({**asdict(self), "file": self.file}.items()))

    @classmethod
    def pinned(cls, benchmark: str, path: str) -> DataOrigin:
        """The copy ``<benchmark>/<path>`` as ``etc/downloads.json`` describes it."""
        entry = download_entry(benchmark, path)
        if "derived_from" not in entry:
            raise KeyError(f"{benchmark}/{path} is not a derived copy in etc/downloads.json (no derived_from)")
        return cls(benchmark=benchmark, path=path, replaces=entry["derived_from"], sha256=entry["expected_sha256"],
                   size=entry["size"], source=entry["origin"], url=entry["url"], note=entry.get("note", ""))

    @classmethod
    def from_dict(cls, record: dict) -> DataOrigin:
        """The record :meth:`to_dict` wrote (``file`` is derived, so not read)."""
        return cls(**{name: record[name] for name in cls.__dataclass_fields__ if name in record})


class ReleaseOrDerived:
    """A streamer (``path()``, ``stream()``) over a release file, or its derived copy where the mirror lacks the
    release and the cache holds none."""

    def __init__(self, release: VerifiedDownload, derived: DataOrigin):
        if derived.benchmark != release.benchmark:
            raise ValueError(f"{derived.file}: not a file of benchmark {release.benchmark!r}")
        self.release = release
        self.derived = derived
        self.copy = VerifiedDownload(benchmark=derived.benchmark, file=derived.path, url=derived.url,
                                      sha256=derived.sha256, size=derived.size)

    def __repr__(self):
        return f"ReleaseOrDerived({self.release.benchmark}/{self.release.file} or {self.derived.file})"

    def origin(self) -> DataOrigin | None:
        """The copy's record when the copy is what is read, ``None`` when the release is (a few ``stat`` calls)."""
        mirror = self.release.mirror_path()
        if mirror is None or mirror.is_file() or self.release.cache_path.is_file():
            return None
        return self.derived if self.copy.mirror_path().is_file() else None

    @property
    def file(self) -> str:
        """The name of the file read (the release's, or the copy's path), for the positions of messages."""
        return self.derived.path if self.origin() is not None else self.release.file

    def path(self, force=True):
        """The verified file read: the release (mirror, cache or download), or the copy in the mirror."""
        if self.origin() is None:
            release = self.release.mirror_path()
            if force and release is not None and not release.is_file() and not self.release.cache_path.is_file():
                raise DownloadError(
                    f"{release}: not found, nor its {self.derived.kind} {self.copy.mirror_path()}; "
                    f"{MIRROR_ENV}={mirror_root()} is set, so {self.release.benchmark}/{self.release.file} is read "
                    f"from there (originally {self.release.url})")
            return self.release.path(force)
        try:
            return self.copy.path(force)
        except ChecksumError as error:
            raise ChecksumError(
                f"{error}: the file is neither the release's {self.release.file} nor the {self.derived.kind} "
                f"this suite knows (from {self.derived.source})") from None

    @contextlib.contextmanager
    def stream(self):
        with open(self.path(), "rb") as f:
            yield f


class DataOrigins:
    """ir_datasets constituent: ``dataset.data_origins()`` lists the derived copies the dataset reads."""

    def __init__(self, *streamers):
        self._streamers = [s for s in streamers if isinstance(s, ReleaseOrDerived)]

    def data_origins(self) -> list[DataOrigin]:
        """The :class:`DataOrigin` of each derived copy read instead of its release (empty: the release only)."""
        origins = [s.origin() for s in self._streamers]
        return list(dict.fromkeys(o for o in origins if o is not None))


class OriginDocumentation:
    """ir_datasets documentation whose ``desc`` adds a paragraph on each possible derived copy, from its record."""

    def __init__(self, documentation, *origins: DataOrigin):
        self._documentation = documentation
        self._origins = origins

    def documentation(self):
        docs = dict(self._documentation.documentation())
        paragraphs = [
            f"<p>Offline, where the release's <kbd>{o.benchmark}/{o.replaces}</kbd> is absent from "
            f"<kbd>{MIRROR_ENV}</kbd> (and from the cache), a {o.kind} is read in its place: "
            f"<kbd>{o.file}</kbd>, {o.size:,} bytes, sha256 <kbd>{o.sha256}</kbd>, from {o.source}. {o.note} "
            f"Every run, evaluation, report card and leaderboard computed on it says so.</p>"
            for o in self._origins]
        docs["desc"] = docs.get("desc", "") + "".join(paragraphs)
        return docs
