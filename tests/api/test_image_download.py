"""Image downloads as Glance v2 serves them (issue 19, item 2): the data streamed with
`Content-Length` and `Content-MD5`, single byte ranges (`Range`, and the legacy request
`Content-Range`) as 206 with `Content-Range`, unsatisfiable ones as 416, several at once as
a 400, and no data as a 204. The memory side is tests/clients/test_image_download_memory.py.
"""

from __future__ import annotations

import hashlib

import pytest

DATA = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MD5 = hashlib.md5(DATA, usedforsecurity=False).hexdigest()


@pytest.fixture(scope="module")
def image(api) -> str:
    r = api.post("/image/v2/images", json={"name": "letters", "disk_format": "raw",
                                           "container_format": "bare"})
    assert r.status_code == 201, r.text
    image_id = r.json()["id"]
    r = api.put(f"/image/v2/images/{image_id}/file", content=DATA,
                headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    return image_id


def test_a_whole_download_carries_its_length_and_checksum(api, image):
    r = api.get(f"/image/v2/images/{image}/file")
    assert r.status_code == 200
    assert r.content == DATA
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["content-length"] == str(len(DATA))
    assert r.headers["content-md5"] == MD5
    assert "content-range" not in r.headers


@pytest.mark.parametrize("header,body,content_range", [
    ("bytes=3-10", b"DEFGHIJK", "bytes 3-10/26"),
    ("bytes=0-0", b"A", "bytes 0-0/26"),
    ("bytes=20-", b"UVWXYZ", "bytes 20-25/26"),
    ("bytes=20-100", b"UVWXYZ", "bytes 20-25/26"),  # cut at the end
    ("bytes=-2", b"YZ", "bytes 24-25/26"),  # a suffix
    ("bytes=-100", DATA, "bytes 0-25/26"),  # a suffix longer than the image: all of it
])
def test_a_range_is_a_206_with_its_content_range(api, image, header, body, content_range):
    r = api.get(f"/image/v2/images/{image}/file", headers={"Range": header})
    assert r.status_code == 206, r.text
    assert r.content == body
    assert r.headers["content-range"] == content_range
    assert r.headers["content-length"] == str(len(body))
    assert r.headers["content-md5"] == MD5  # the image's checksum, as Glance sends it


def test_a_content_range_request_header_is_honoured_as_glance_does(api, image):
    r = api.get(f"/image/v2/images/{image}/file", headers={"Content-Range": "bytes 1-3/*"})
    assert r.status_code == 206, r.text
    assert r.content == b"BCD"
    assert r.headers["content-range"] == "bytes 1-3/26"
    r = api.get(f"/image/v2/images/{image}/file", headers={"Content-Range": "bytes 5-2/*"})
    assert r.status_code == 416, r.text


@pytest.mark.parametrize("header", ["bytes=10-5", "bytes=26-", "bytes=100-200", "pages=1-2",
                                    "bytes=x-y", "bytes=-"])
def test_an_unsatisfiable_range_is_a_416(api, image, header):
    r = api.get(f"/image/v2/images/{image}/file", headers={"Range": header})
    assert r.status_code == 416, r.text
    assert r.json()["code"] == 416


def test_several_ranges_are_a_400(api, image):
    r = api.get(f"/image/v2/images/{image}/file", headers={"Range": "bytes=0-1,4-5"})
    assert r.status_code == 400, r.text
    assert "multiple ranges" in r.json()["message"]


def test_an_image_without_data_is_a_204(api):
    image_id = api.post("/image/v2/images", json={"name": "empty"}).json()["id"]
    r = api.get(f"/image/v2/images/{image_id}/file")
    assert r.status_code == 204
    assert r.content == b""


def test_a_download_is_streamed_in_chunks(api, monkeypatch):
    """The response body is produced a chunk at a time (never one bytes object of the
    image): a 3.5-chunk image arrives in four reads of the file."""
    from stackling.image import download

    monkeypatch.setattr(download, "CHUNK", 8)
    reads = []
    real = download.chunks

    def counting(fh, offset, length):
        for chunk in real(fh, offset, length):
            reads.append(len(chunk))
            yield chunk

    monkeypatch.setattr(download, "chunks", counting)
    image_id = api.post("/image/v2/images", json={"name": "c", "disk_format": "raw",
                                                  "container_format": "bare"}).json()["id"]
    api.put(f"/image/v2/images/{image_id}/file", content=DATA + b"!!",
            headers={"Content-Type": "application/octet-stream"})
    r = api.get(f"/image/v2/images/{image_id}/file")
    assert r.content == DATA + b"!!"
    assert reads == [8, 8, 8, 4]


def test_head_answers_the_headers_without_reading_the_data(api, image, monkeypatch):
    from stackling.image import download

    def never(*args):
        raise AssertionError("a HEAD read the image data")

    monkeypatch.setattr(download, "chunks", never)
    r = api.request("HEAD", f"/image/v2/images/{image}/file")
    assert r.status_code == 200
    assert r.headers["content-length"] == str(len(DATA))
    assert r.headers["content-md5"] == MD5
    assert r.content == b""
