import io

import pytest

from ir_datasets_ext.download import ChecksumError, DownloadError, VerifiedDownload
from ir_datasets_ext.gdrive import GoogleDriveSource, drive_file_id, drive_url, parse_confirmation

FILE_ID = "18-ODtPKGH3KC3_KijoobPHbxzDHWeUYv"
URL = drive_url(FILE_ID)

# The page drive.google.com answers for files too large to be virus-scanned (2024 layout, abridged).
NEW_PAGE = f"""<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title>
<meta http-equiv="content-type" content="text/html; charset=utf-8"/></head><body>
<div class="uc-main"><div id="uc-text"><p class="uc-warning-caption">Google Drive can&#39;t scan this file for viruses.</p>
<p class="uc-warning-subcaption"><span class="uc-name-size"><a href="/open?id={FILE_ID}">corpus.json</a> (58M)</span>
is too large for Google to scan for viruses. Would you still like to download this file?</p>
<form id="download-form" action="https://drive.usercontent.google.com/download" method="get">
<input type="submit" id="uc-download-link" class="goog-inline-block jfk-button jfk-button-action" value="Download anyway"/>
<input type="hidden" name="id" value="{FILE_ID}">
<input type="hidden" name="export" value="download">
<input type="hidden" name="confirm" value="t">
<input type="hidden" name="uuid" value="0c9d7b5e-8f1a-4a39-9d4b-5c0a2f7e1b11">
</form></div></div></body></html>"""

OLD_PAGE = f"""<html><body><p>Google Drive can't scan this file for viruses.</p>
<a id="uc-download-link" href="/uc?export=download&amp;confirm=AbCd&amp;id={FILE_ID}">Download anyway</a>
</body></html>"""


def test_new_confirmation_form():
    request = parse_confirmation(NEW_PAGE, URL)
    assert request.url == "https://drive.usercontent.google.com/download"
    assert request.params == {"id": FILE_ID, "export": "download", "confirm": "t",
                              "uuid": "0c9d7b5e-8f1a-4a39-9d4b-5c0a2f7e1b11"}


def test_old_cookie_and_link():
    request = parse_confirmation("<html></html>", URL, {"download_warning_13058876669334088843_x": "Xy_12"})
    assert request.url == "https://drive.google.com/uc"
    assert request.params == {"export": "download", "id": FILE_ID, "confirm": "Xy_12"}
    request = parse_confirmation(OLD_PAGE, URL)
    assert request.url == "https://drive.google.com/uc"
    assert request.params == {"export": "download", "confirm": "AbCd", "id": FILE_ID}


def test_other_pages_are_not_confirmations():
    assert parse_confirmation("<html><body>Quota exceeded. Too many users have viewed or downloaded this file"
                              "</body></html>", URL) is None


def test_file_ids():
    assert drive_file_id("https://drive.google.com/uc?id=1PwDeIPdGu4T2uCdhvzdVepdqdV6CzzgL") == \
        "1PwDeIPdGu4T2uCdhvzdVepdqdV6CzzgL"
    assert drive_file_id(f"https://drive.google.com/file/d/{FILE_ID}/view") == FILE_ID
    with pytest.raises(ValueError):
        drive_file_id("https://example.org/x")


class _Raw(io.BytesIO):
    def read(self, size=-1, decode_content=False):
        return super().read(size)


class _Response:
    def __init__(self, body: bytes, content_type: str, cookies=None):
        self.raw = _Raw(body)
        self.headers = {"Content-Type": content_type}
        self.cookies = cookies or {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def raise_for_status(self):
        pass


class _Session:
    """Answers the confirmation page first, then the file (or a quota page)."""

    def __init__(self, payload: bytes, second_html=False):
        self.calls = []
        self._payload = payload
        self._second_html = second_html

    def get(self, url, params=None, **kwargs):
        self.calls.append((url, params))
        if len(self.calls) == 1:
            return _Response(NEW_PAGE.encode(), "text/html; charset=utf-8")
        if self._second_html:
            return _Response(b"<html>Quota exceeded</html>", "text/html")
        return _Response(self._payload, "application/octet-stream")


def test_source_follows_confirmation_into_verified_download(tmp_path):
    payload = b'["doc a", "doc b"]'
    session = _Session(payload)
    download = VerifiedDownload("excluir", "corpus.json", URL,
                                source=lambda url: GoogleDriveSource(url, session=session))
    with download.stream() as stream:
        assert stream.read() == payload
    assert session.calls[1] == ("https://drive.usercontent.google.com/download",
                                {"id": FILE_ID, "export": "download", "confirm": "t",
                                 "uuid": "0c9d7b5e-8f1a-4a39-9d4b-5c0a2f7e1b11"})
    # a different payload later is rejected by the recorded hash
    download.cache_path.unlink()
    other = VerifiedDownload("excluir", "corpus.json", URL,
                             source=lambda url: GoogleDriveSource(url, session=_Session(b'["changed"]')))
    with pytest.raises(ChecksumError):
        other.path()
    assert not other.cache_path.exists()


def test_quota_page_after_confirmation_is_a_download_error():
    download = VerifiedDownload("excluir", "x.json", URL,
                                source=lambda url: GoogleDriveSource(url, session=_Session(b"", second_html=True)))
    with pytest.raises(DownloadError, match="still answers with an HTML page"):
        download.path()
    assert not download.cache_path.exists()
