"""Request limits applied to every route before authentication: body size, body read
timeouts (per chunk and overall), bodies read at once per client address, NUL bytes, text
that is not Unicode, JSON nesting and non-standard JSON constants.

Bodies are read here, counted as they arrive: a declared `Content-Length` over the limit
is refused before a byte is read, a chunked body as soon as it passes it (413). Routes
that take bulk data (image uploads) are streamed instead: the handler pulls the chunks
after authentication, under their own, larger cap. The limits are `Settings.http`.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

import anyio
import anyio.from_thread
from starlette.requests import ClientDisconnect

from stackling.common import errors


class RequestEntityTooLarge(errors.ApiError):
    status = 413
    message = "Request is too large."


class RequestTimeout(errors.ApiError):
    status = 408
    message = "Request timed out: the request body did not arrive in time."


class TooManyRequests(errors.ApiError):
    status = 429
    message = ("Too many request bodies are being sent from this address at once; "
               "try again when one has finished.")


class ClientGone(errors.BadRequest):
    """The client went away mid-body: nobody reads the answer, but it is no server error."""

    message = "The client disconnected before sending the whole request body."


class InvalidInput(errors.BadRequest):
    """Input no backend can store or no parser should recurse into (a 400)."""


# The rest of a refused body is not read: the connection is closed after the answer
# rather than kept alive draining it.
CLOSE = {"Connection": "close"}


def _too_large(limit: int) -> RequestEntityTooLarge:
    return RequestEntityTooLarge(f"Request is too large: the limit is {limit} bytes.",
                                 headers=dict(CLOSE))


def declared_length(headers: Any, limit: int) -> int | None:
    """The Content-Length, refused (413) before reading when it is over `limit`."""
    raw = headers.get("content-length")
    if raw is None:
        return None
    try:
        length = int(raw)
    except ValueError:
        raise errors.BadRequest("Content-Length must be an integer.") from None
    if length > limit:
        raise _too_large(limit)
    return length


class BodyReaders:
    """How many request bodies each client address is sending to this process at once.
    Bounded per process: what a slow body holds (a connection, a buffer) is the process's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # streamed bodies are read from worker threads
        self._count: dict[str, int] = {}

    @contextlib.contextmanager
    def reading(self, address: str, limit: int) -> Iterator[None]:
        with self._lock:
            held = self._count.get(address, 0)
            if 0 < limit <= held:
                # Refused before a byte of the body is read: the connection is closed.
                raise TooManyRequests(headers={**CLOSE, "Retry-After": "1"})
            self._count[address] = held + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._count.pop(address) - 1
                if left:
                    self._count[address] = left

    def held(self, address: str) -> int:
        with self._lock:
            return self._count.get(address, 0)


READERS = BodyReaders()


async def read_body(stream: AsyncIterator[bytes], headers: Any, limit: int,
                    timeout: float, deadline: float = 0) -> bytes:
    """The whole body, at most `limit` bytes, each chunk within `timeout` seconds and all
    of it within `deadline` seconds (0: no overall deadline)."""
    declared_length(headers, limit)
    chunks: list[bytes] = []
    size = 0
    iterator = stream.__aiter__()
    end = anyio.current_time() + deadline if deadline > 0 else math.inf
    while True:
        wait = min(timeout, end - anyio.current_time())
        if wait <= 0:
            raise RequestTimeout(headers=dict(CLOSE))
        with anyio.move_on_after(wait) as scope:
            try:
                chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except ClientDisconnect:
                raise ClientGone() from None
        if scope.cancelled_caught:
            raise RequestTimeout(headers=dict(CLOSE))
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


class BodyStream:
    """A streamed request body, read from a worker thread chunk by chunk (never whole).
    Past `grace` seconds it must have averaged `min_rate` bytes a second (0: no minimum),
    and it counts as one of its address's bodies in flight while it is read."""

    def __init__(self, stream: AsyncIterator[bytes], headers: Any, limit: int,
                 timeout: float, grace: float = 0, min_rate: int = 0, address: str = "-",
                 readers_limit: int = 0) -> None:
        self._iterator = stream.__aiter__()
        self._headers = headers
        self.limit = limit
        self.timeout = timeout
        self.grace, self.min_rate = grace, min_rate
        self.address, self.readers_limit = address, readers_limit
        self.size = 0
        self._started = False
        self._began: float | None = None

    def __iter__(self) -> Iterator[bytes]:
        if self._started:
            # A transaction retried after a lost race cannot read the body again.
            raise errors.Conflict("The request body was already read; send the request again.")
        self._started = True
        declared_length(self._headers, self.limit)
        with READERS.reading(self.address, self.readers_limit):
            while True:
                chunk = anyio.from_thread.run(self._next)
                if chunk is None:
                    return
                self.size += len(chunk)
                if self.size > self.limit:
                    raise _too_large(self.limit)
                if chunk:
                    yield chunk

    def _wait(self) -> float:
        """Seconds the next chunk may take: the per-chunk timeout, or less when the body
        would fall below its minimum average rate."""
        if self.min_rate <= 0:
            return self.timeout
        now = anyio.current_time()
        if self._began is None:
            self._began = now
        return min(self.timeout, self._began + self.grace + self.size / self.min_rate - now)

    async def _next(self) -> bytes | None:
        wait = self._wait()
        if wait <= 0:
            raise RequestTimeout(headers=dict(CLOSE))
        with anyio.move_on_after(wait) as scope:
            try:
                return await self._iterator.__anext__()
            except StopAsyncIteration:
                return None
            except ClientDisconnect:
                raise ClientGone() from None
        if scope.cancelled_caught:
            raise RequestTimeout(headers=dict(CLOSE))
        return None


# ------------------------------------------------------------------ input sanity
def check_text(value: str, what: str) -> None:
    """NUL bytes are refused everywhere: PostgreSQL cannot store them in text. So is a
    lone surrogate (JSON's "\\ud800"): no database driver can encode it (a 500 before)."""
    if "\x00" in value:
        raise InvalidInput(f"Invalid input: {what} contains a NUL character.")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"Invalid input: {what} is not valid Unicode text "
                               "(a lone surrogate).") from None


def check_utf8(raw: bytes, what: str) -> str:
    """`raw` as UTF-8 text; anything else is an InvalidInput (400)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"Invalid input: {what} is not valid UTF-8.") from None


def check_request_text(path: str, query: Any, scope: Any = None) -> None:
    if scope is not None:
        # Percent-decoding replaces invalid UTF-8 with U+FFFD silently: check the raw bytes.
        check_utf8(unquote_to_bytes(scope.get("raw_path") or b""), "the URL path")
        check_utf8(unquote_to_bytes(scope.get("query_string") or b""), "the query string")
    check_text(path, "the URL path")
    for key, value in query.multi_items():
        check_text(key, "a query parameter")
        check_text(value, "a query parameter")


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (RFC 8259); Python's parser accepts them by default.
    raise ValueError(f"{name} is not a valid JSON value")


class TooDeep(ValueError):
    pass


def loads(raw: bytes | str, max_depth: int) -> Any:
    """Strict JSON: no NaN/Infinity; nesting beyond `max_depth` or a NUL in any string
    is an InvalidInput (400); other malformed input is a ValueError for the caller."""
    if isinstance(raw, bytes):
        # RFC 8259: JSON is UTF-8 (a leading BOM is tolerated, as json.loads does).
        raw = check_utf8(raw.removeprefix(b"\xef\xbb\xbf"), "the request body")
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise InvalidInput(f"Invalid input: JSON nested deeper than {max_depth} levels.") from None
    _check_tree(value, max_depth)
    return value


def _check_tree(value: Any, max_depth: int) -> None:
    # Iterative, so that checking a deep document cannot itself recurse too deep.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                raise InvalidInput(f"Invalid input: JSON nested deeper than {max_depth} levels.")
            for key, sub in item.items():
                check_text(key, "the request body")
                stack.append((sub, depth + 1))
        elif isinstance(item, list):
            if depth > max_depth:
                raise InvalidInput(f"Invalid input: JSON nested deeper than {max_depth} levels.")
            stack.extend((sub, depth + 1) for sub in item)
        elif isinstance(item, str):
            check_text(item, "the request body")


async def accept(rq: Any, streamed: bool) -> None:
    """Check a request before authentication: NUL bytes in its path and query, then its
    body (size, read timeout; a JSON body's nesting, NaN and NUL bytes). A streamed body
    is left for the handler, under the image size cap."""
    request, http = rq.request, rq.settings.http
    check_request_text(request.url.path, request.query_params, request.scope)
    if streamed:
        rq.body_stream = BodyStream(request.stream(), request.headers, http.image_size_cap,
                                    http.client_timeout, grace=http.body_timeout,
                                    min_rate=http.min_upload_rate, address=rq.client_address,
                                    readers_limit=http.max_body_readers_per_client)
        return
    limit = (http.orchestration_max_request_body_size if rq.service.name == "orchestration"
             else http.max_request_body_size)
    headers = request.headers
    if headers.get("content-length", "0") == "0" and "transfer-encoding" not in headers:
        # HTTP/1.1 (RFC 9112 6.3): a request with neither header has no body, like every
        # GET and DELETE; nothing to wait for, so no read under a timeout scope.
        rq.raw_body = b""
        return
    declared_length(headers, limit)  # a 413 needs no reading, so no reader's place
    with READERS.reading(rq.client_address, http.max_body_readers_per_client):
        rq.raw_body = await read_body(request.stream(), headers, limit, http.client_timeout,
                                      http.body_timeout)
    ctype = request.headers.get("content-type", "")
    if rq.raw_body.strip() and ("json" in ctype or not ctype):
        try:
            rq._json = loads(rq.raw_body, http.max_json_depth)
        except (ValueError, UnicodeDecodeError):
            pass  # not JSON: the handler answers in its own words, if it wants a body
