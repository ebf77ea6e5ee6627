"""The socket `stackling serve` binds before anything else (cli._listen)."""

from __future__ import annotations

import socket

from stackling.cli import _listen


def test_connections_have_nagle_off() -> None:
    """asyncio turns Nagle off only on sockets whose proto says TCP: a listening socket made
    with proto 0 gave connections that held each two-part response 40 ms for the client's
    delayed ACK (every request took 44 ms)."""
    sock = _listen("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        with socket.create_connection(sock.getsockname()):
            conn, _ = sock.accept()
            with conn:
                assert conn.proto == socket.IPPROTO_TCP
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()
