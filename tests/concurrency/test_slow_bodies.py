"""Slow request bodies against a live server over raw loopback sockets (issue 19, item 6).

Before, `Content-Length: 100000` and then a byte every 5 s held a connection for as long
as the client liked (the read timeout was per chunk only), and one address could hold 300
such connections. Now a body has an overall deadline (`http.body_timeout`: 408), streamed
image data a minimum average rate past it (`http.min_upload_rate`: 408), and one address
may be sending at most `http.max_body_readers_per_client` bodies at once (429, before a
byte of the body is read); other addresses are served meanwhile. Every wait below is on a
condition (an answer arriving), with a generous cap so that a regression fails, not hangs.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx

from tests.conftest import ADMIN_PASSWORD

CAP = 120  # seconds before a wait that should have ended is a failure
TOKEN_BODY = json.dumps({"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": "admin", "domain": {"id": "default"}, "password": ADMIN_PASSWORD}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}).encode()


@contextmanager
def connect(port: int, source: str = "127.0.0.1") -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=CAP,
                                    source_address=(source, 0))
    try:
        yield sock
    finally:
        sock.close()


def start(sock: socket.socket, path: str, length: int, first: bytes,
          extra: str = "") -> None:
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {length}\r\n{extra}\r\n".encode() + first)


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def drip(sock: socket.socket, length: int, piece: bytes = b" ", every: float = 0.05) -> bytes:
    """Send `piece` every `every` seconds until the server answers; its answer."""
    sent, deadline = 0, time.monotonic() + CAP
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], every)
        if readable:
            return answer(sock)
        assert sent + len(piece) < length, "the whole body went out: never cut off"
        sock.sendall(piece)
        sent += len(piece)
    raise AssertionError(f"still reading the body after {CAP} s ({sent} bytes)")


def first_answer(socks: list[socket.socket]) -> tuple[int, bytes]:
    readable, _, _ = select.select(socks, [], [], CAP)
    assert readable, f"none of {len(socks)} connections answered in {CAP} s"
    return socks.index(readable[0]), answer(readable[0])


def test_a_trickling_body_is_cut_off_at_the_overall_deadline(cloud_factory):
    # Each byte comes well within the per-chunk timeout; only the overall deadline ends it.
    server = cloud_factory("sqlite", extra_env={"STACKLING_HTTP__BODY_TIMEOUT": "1",
                                                "STACKLING_HTTP__CLIENT_TIMEOUT": "300"})
    with connect(server.port) as sock:
        start(sock, "/identity/v3/auth/tokens", 100000, b"{")
        reply = drip(sock, 100000)
    assert reply.startswith(b"HTTP/1.1 408"), reply[:300]
    assert b'"code":408' in reply and b"connection: close" in reply.lower()
    # A body sent at once is not affected.
    r = httpx.post(f"{server.url}/identity/v3/auth/tokens", content=TOKEN_BODY,
                   headers={"Content-Type": "application/json"}, timeout=CAP)
    assert r.status_code == 201, r.text


def test_a_trickling_image_upload_falls_below_the_minimum_rate(cloud_factory):
    server = cloud_factory("sqlite", extra_env={"STACKLING_HTTP__BODY_TIMEOUT": "1",
                                                "STACKLING_HTTP__MIN_UPLOAD_RATE": "100000",
                                                "STACKLING_HTTP__CLIENT_TIMEOUT": "300"})
    token = server.token()
    image = server.http(token).post("/image/v2/images", json={
        "name": "slow", "disk_format": "raw", "container_format": "bare"}).json()["id"]
    size = 10 ** 9
    with connect(server.port) as sock:
        sock.sendall(f"PUT /image/v2/images/{image}/file HTTP/1.1\r\nHost: x\r\n"
                     f"X-Auth-Token: {token}\r\nContent-Type: application/octet-stream\r\n"
                     f"Content-Length: {size}\r\n\r\n".encode())
        reply = drip(sock, size, piece=b"\0" * 1024)  # ~20 KB/s, well under 100 KB/s
    assert reply.startswith(b"HTTP/1.1 408"), reply[:300]
    assert b'"code":408' in reply
    shown = server.http(token).get(f"/image/v2/images/{image}").json()
    assert shown["status"] == "queued", shown


def test_one_address_may_send_only_so_many_bodies_at_once(cloud_factory):
    server = cloud_factory("sqlite", extra_env={"STACKLING_HTTP__MAX_BODY_READERS_PER_CLIENT": "3",
                                                "STACKLING_HTTP__BODY_TIMEOUT": "600",
                                                "STACKLING_HTTP__CLIENT_TIMEOUT": "600"})
    path = "/identity/v3/auth/tokens"  # unauthenticated, as the attack was
    with ExitStack() as stack:
        slow = [stack.enter_context(connect(server.port)) for _ in range(4)]
        for sock in slow:
            start(sock, path, 100000, b"{")
        # Three are being read; whichever the server reached last is refused at once.
        refused, reply = first_answer(slow)
        assert reply.startswith(b"HTTP/1.1 429"), reply[:300]
        assert b'"code":429' in reply and b"retry-after: 1" in reply.lower()
        held = [s for i, s in enumerate(slow) if i != refused]
        # While they hold their places, a further body from the address is refused too...
        with connect(server.port) as extra:
            start(extra, path, len(TOKEN_BODY), TOKEN_BODY)
            assert answer(extra).startswith(b"HTTP/1.1 429")
        # ...a request without a body is served...
        assert httpx.get(f"{server.url}/identity/v3", timeout=CAP).status_code == 200
        # ...and so is another address.
        with connect(server.port, source="127.0.0.2") as other:
            start(other, path, len(TOKEN_BODY), TOKEN_BODY, extra="Connection: close\r\n")
            assert answer(other).startswith(b"HTTP/1.1 201")
        for sock in held:
            sock.close()
    # The slow clients gone, their places are free again (the server notices the close).
    deadline = time.monotonic() + CAP
    while True:
        r = httpx.post(f"{server.url}{path}", content=TOKEN_BODY, timeout=CAP,
                       headers={"Content-Type": "application/json"})
        if r.status_code != 429 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.status_code == 201, r.text
