"""Google Drive downloads, including the confirmation page Drive answers for files too large to virus-scan: an old
one whose ``download_warning`` cookie holds the token to repeat the request with, or a ``download-form`` to send.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from html.parser import HTMLParser
from typing import NamedTuple
from urllib.parse import parse_qs, urljoin, urlparse

import ir_datasets

from .download import DownloadError

__all__ = ["GoogleDriveSource", "ConfirmRequest", "drive_file_id", "drive_url", "parse_confirmation"]

_MAX_PAGE = 1 << 20  # an HTML answer larger than this is not a confirmation page


class ConfirmRequest(NamedTuple):
    """The request that fetches the file after a confirmation page: ``GET url?params``."""

    url: str
    params: dict


def drive_file_id(url: str) -> str:
    """The file id of a Google Drive URL (``uc?id=...``, ``open?id=...`` or ``/file/d/<id>/...``)."""
    parsed = urlparse(url)
    ids = parse_qs(parsed.query).get("id")
    if ids:
        return ids[0]
    match = re.search(r"/(?:file/)?d/([A-Za-z0-9_-]+)", parsed.path)
    if match:
        return match.group(1)
    raise ValueError(f"{url}: not a Google Drive file URL (no file id)")


def drive_url(file_id: str) -> str:
    """The direct-download URL of a Google Drive file."""
    return f"https://drive.google.com/uc?export=download&id={file_id}"


class _FormParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []  # [(attrs, {name: value})]
        self._current = None
        self.links = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._current = (attrs, {})
            self.forms.append(self._current)
        elif tag == "input" and self._current is not None and attrs.get("name"):
            if (attrs.get("type") or "").lower() not in ("submit", "button"):
                self._current[1][attrs["name"]] = attrs.get("value") or ""
        elif tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


def parse_confirmation(html: str, url: str, cookies: dict | None = None) -> ConfirmRequest | None:
    """The follow-up request of the confirmation page ``html`` answered for ``url``, or ``None`` if it is not one."""
    for name, value in (cookies or {}).items():
        if name.startswith("download_warning"):
            return ConfirmRequest(url.split("?", 1)[0], {**_query(url), "confirm": value})
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    for attrs, inputs in parser.forms:
        action = attrs.get("action") or ""
        is_confirmation = attrs.get("id") == "download-form" or "confirm" in inputs
        if is_confirmation and action and (attrs.get("method") or "get").lower() == "get":
            return ConfirmRequest(urljoin(url, action), dict(inputs))
    for href in parser.links:  # old page: <a href="/uc?export=download&amp;confirm=XXXX&amp;id=...">
        target = urljoin(url, href)
        query = _query(target)
        if "confirm" in query:
            return ConfirmRequest(target.split("?", 1)[0], query)
    return None


def _query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def _looks_like_html(response) -> bool:
    return "text/html" in (response.headers.get("Content-Type") or "").lower()


class GoogleDriveSource:
    """``source(url)`` for :class:`~ir_datasets_ext.download.VerifiedDownload`: streams a Drive file; an HTML page
    that is neither the file nor a confirmation (quota, no access) is a DownloadError."""

    def __init__(self, url: str, session=None):
        self.url = drive_url(drive_file_id(url)) if "export=download" not in url else url
        self._session = session

    def _http_args(self):
        return {
            "stream": True,
            "headers": {"User-Agent": f"ir_datasets/{ir_datasets.__version__}"},
            "timeout": float(os.environ.get("IR_DATASETS_DL_TIMEOUT", "15")),
            "verify": os.environ.get("IR_DATASETS_DL_SKIP_SSL", "").lower() != "true",
        }

    @contextlib.contextmanager
    def stream(self):
        session = self._session
        if session is None:
            session = ir_datasets.lazy_libs.requests().Session()
        with contextlib.ExitStack() as stack:
            response = stack.enter_context(session.get(self.url, **self._http_args()))
            response.raise_for_status()
            if _looks_like_html(response):
                page = response.raw.read(_MAX_PAGE, decode_content=True).decode("utf-8", "replace")
                request = parse_confirmation(page, self.url, dict(response.cookies.items()))
                if request is None:
                    raise DownloadError(
                        f"{self.url}: Google Drive answered with an HTML page that is neither the file nor a "
                        f"download confirmation (quota exceeded, file removed or not shared?)")
                response = stack.enter_context(session.get(request.url, params=request.params, **self._http_args()))
                response.raise_for_status()
                if _looks_like_html(response):
                    raise DownloadError(
                        f"{request.url}: Google Drive still answers with an HTML page after the download "
                        f"confirmation (quota exceeded?)")
            response.raw.decode_content = True
            yield io.BufferedReader(response.raw, buffer_size=1 << 20)
