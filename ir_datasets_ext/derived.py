"""Derived copies: another project's copy of a release file, read only where the release is not.

Some releases cannot be reached from every machine (NevIR's ``test.jsonl`` on the Hugging Face hub, ExcluIR's
``test_manual_final.json`` on Google Drive), while a copy another project derived from them can (re-saved
with fields of its own added). Such a copy is described once, by a :class:`DataOrigin`, and read through a
:class:`ReleaseOrDerived` in place of the release file:

* The release always wins: the copy is read only when ``IR_DATASETS_EXT_MIRROR`` is set, the release file is
  absent from the mirror and from the ir_datasets cache, and the copy is in the mirror at
  ``<mirror>/<benchmark>/<DataOrigin.path>``. Without a mirror the release is fetched as usual.
* The copy is verified by its own size and SHA-256 (pinned in ``etc/downloads.json``, not trusted on first use); a file there that is
  not that copy is refused with one line.
* The origin is never hidden: every dataset that reads such a file answers ``data_origins()`` (an ir_datasets
  constituent, :class:`DataOrigins`) with the records of the copies it reads, which the suite writes into run
  sidecars, evaluations, report cards and leaderboards. The dataset's ir_datasets documentation says it
  too (:class:`OriginDocumentation`).

What a copy adds to the release's fields is the dataset module's concern: its reader takes the release's own
fields and ignores the rest.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

from .download import MIRROR_ENV, ChecksumError, DownloadError, VerifiedDownload, download_entry, mirror_root

__all__ = ["DERIVED", "DataOrigin", "ReleaseOrDerived", "DataOrigins", "OriginDocumentation"]

#: :attr:`DataOrigin.kind` of a copy derived from the release (the words every output shows).
DERIVED = "derived copy"


@dataclass(frozen=True)
class DataOrigin:
    """Where a file a dataset reads comes from, when it is not the benchmark's own release.

    Parameters
    ----------
    benchmark : str
        The benchmark's folder in the mirror (``nevir``).
    path : str
        The copy's path below ``<mirror>/<benchmark>/`` (``derived/NevIR_test_final.json``).
    replaces : str
        The release file it stands in for, below the same folder (``test.jsonl``).
    sha256 : str
        The copy's SHA-256 (64 lowercase hexadecimal digits).
    size : int
        Its size in bytes.
    source : str
        Where the copy was taken from, pinned: repository, commit and path.
    url : str
        The copy's immutable URL (at that commit).
    note : str
        What it holds besides the release's fields, and what the suite reads of it (one sentence).
    kind : str
        :data:`DERIVED`.
    """

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
        """The record as sidecars, evaluations, report cards and leaderboards store it: every field and
        :attr:`file`, keys sorted."""
        return dict(sorted({**asdict(self), "file": self.file}.items()))

    @classmethod
    def pinned(cls, benchmark: str, path: str) -> DataOrigin:
        """The copy ``<benchmark>/<path>`` as ``etc/downloads.json`` describes it (its ``derived_from``, ``origin``,
        ``note``, URL, SHA-256 and size)."""
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
    """ir_datasets' streamer protocol (``path()``, ``stream()``) over a release file or its derived copy.

    Parameters
    ----------
    release : VerifiedDownload
        The release file (pinned URL, mirror layout, checksums or trust on first use).
    derived : DataOrigin
        The copy read in its place where the release is absent (see the module documentation).
    """

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
        """The verified file read: the release (mirror, cache or download), or the copy in the mirror.

        Raises
        ------
        DownloadError
            With a mirror: neither the release nor the copy is there (both named).
        ChecksumError
            The file is not the release (its checksum) or not the copy (its pinned size and SHA-256).
        """
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
    """ir_datasets constituent: ``dataset.data_origins()`` lists the derived copies the dataset reads.

    Parameters
    ----------
    *streamers : object
        The dataset's source files; those that are :class:`ReleaseOrDerived` are asked which file they read.
    """

    def __init__(self, *streamers):
        self._streamers = [s for s in streamers if isinstance(s, ReleaseOrDerived)]

    def data_origins(self) -> list[DataOrigin]:
        """The :class:`DataOrigin` of each derived copy read instead of its release (empty: the release only)."""
        origins = [s.origin() for s in self._streamers]
        return list(dict.fromkeys(o for o in origins if o is not None))


class OriginDocumentation:
    """ir_datasets documentation (``dataset.documentation()``) that adds each possible derived copy to ``desc``.

    The paragraph is rendered from the :class:`DataOrigin` records, so the documentation never repeats their
    facts by hand.
    """

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
