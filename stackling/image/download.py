"""Image data downloads as Glance v2 serves them: the file streamed from disk in chunks
(never read whole: a member must not be able to exhaust memory with any image size), and
the byte range of a `Range` request (or, as Glance still honours, a `Content-Range` one).

Glance's rules (glance.common.wsgi.Request.get_range_from_request and the download
serializer): one range only (a list is a 400); an unparsable range, or one starting past
the end, is a 416; `bytes=a-b` past the end is cut at the end; `bytes=-n` is the last n
bytes (the whole image when n is not smaller than it). A partial answer is a 206 with
`Content-Range: bytes first-last/size`; every answer carries `Content-Length` and the
image's checksum as `Content-MD5`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from stackling.common.errors import ApiError, BadRequest

CHUNK = 1 << 20  # bytes read per step: memory per download stays about one chunk
_RANGE = re.compile(r"bytes *= *(\d*) *- *(\d*)", re.IGNORECASE)
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|[*])/(?:(\d+)|[*])")


class RangeNotSatisfiable(ApiError):
    status = 416
    message = "Invalid Range header."


def requested_range(range_header: str | None, content_range: str | None,
                    size: int) -> tuple[int, int] | None:
    """(offset, length) of the bytes asked for, or None for the whole image."""
    if range_header is not None:
        if "," in range_header:
            raise BadRequest("Requests with multiple ranges are not supported in Glance. You "
                             "may make multiple single-range requests instead.")
        match = _RANGE.match(range_header)
        if match is None or not (match.group(1) or match.group(2)):
            raise RangeNotSatisfiable("Invalid Range header.")
        first, last = match.group(1), match.group(2)
        if not first:  # a suffix: the last n bytes (`bytes=-0` is all of them, as webob)
            n = int(last)
            offset = size - n if 0 < n < size else 0
            return offset, size - offset
        start = int(first)
        if last and int(last) < start:
            raise RangeNotSatisfiable("Invalid Range header.")
        if start >= size:
            raise RangeNotSatisfiable("Invalid start position in Range header. Start position "
                                      f"MUST be in the inclusive range [0, {size - 1}].")
        stop = min(int(last) + 1, size) if last else size
        return start, stop - start
    if content_range is not None:
        match = _CONTENT_RANGE.match(content_range)
        if match is None or match.group(1) is None or int(match.group(2)) < int(match.group(1)):
            raise RangeNotSatisfiable("Invalid Content-Range header.")
        start, stop = int(match.group(1)), int(match.group(2)) + 1
        length = int(match.group(3)) if match.group(3) else None
        if length is not None and stop > length:
            raise RangeNotSatisfiable("Invalid Content-Range header.")
        if length is None and stop > size:
            raise RangeNotSatisfiable("Invalid stop position in Content-Range header. The stop "
                                      f"position MUST be in the inclusive range [0, {size - 1}].")
        if start >= size:
            raise RangeNotSatisfiable("Invalid start position in Content-Range header. Start "
                                      f"position MUST be in the inclusive range [0, {size - 1}].")
        return start, min(stop, size) - start
    return None


def file_size(fh: BinaryIO) -> int:
    return os.fstat(fh.fileno()).st_size


def chunks(fh: BinaryIO, offset: int, length: int) -> Iterator[bytes]:
    """`length` bytes of `fh` from `offset`, one CHUNK at a time; closes `fh` when done or
    when the client goes away (the generator is closed)."""
    try:
        fh.seek(offset)
        left = length
        while left > 0:
            data = fh.read(min(CHUNK, left))
            if not data:
                return  # the file shrank under us: the client sees a short body
            left -= len(data)
            yield data
    finally:
        fh.close()
