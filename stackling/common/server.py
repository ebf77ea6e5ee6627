"""uvicorn's HTTP/1.1 protocols with a deadline for a request's headers.

`stackling serve` runs httptools' parser on uvloop (HTTP, LOOP; pinned in pyproject.toml):
bench/floor.py measured a hello-world GET under them against h11 on asyncio.

uvicorn closes idle keep-alive connections (`timeout_keep_alive`), but a connection that
never finishes its headers (slowloris) is held forever. This protocol closes a connection
whose headers have not all arrived `client_timeout` seconds after it opened or after the
previous response. A slow body is the ASGI layer's (common/limits.py: 408). The timeout
comes from the environment (`STACKLING_HTTP__CLIENT_TIMEOUT`), which `stackling serve`
sets for its worker processes too.

Its connections close as HTTP servers close them (nginx's `lingering_close`): the answer is
sent and the write side shut, what the client still sends is read and dropped for up to
LINGER seconds (or until it closes), then the socket is closed. Closed at once with bytes
of a body unread (a 408 or 413 to a client still sending), the kernel resets the
connection, and the client could lose the answer ("connection reset by peer").
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def client_timeout() -> float:
    try:
        return float(os.environ.get("STACKLING_HTTP__CLIENT_TIMEOUT", "60"))
    except ValueError:
        return 60.0


LINGER = 2.0  # seconds
# What `stackling serve` runs (bench/floor.py runs its hello-world app under the same).
HTTP = "stackling.common.server:TimedHttpToolsProtocol"
LOOP = "uvloop"


class _LingeringTransport:
    """The connection's transport, whose close() lingers (the module's docstring)."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._timer: asyncio.TimerHandle | None = None
        self.lingering = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self.lingering or self._transport.is_closing():
            return
        self.lingering = True
        try:
            if not self._transport.can_write_eof():
                self._transport.close()
                return
            self._transport.write_eof()  # (after what is still buffered is sent)
            self._transport.resume_reading()
        except (OSError, RuntimeError):
            self._transport.close()
            return
        self._timer = self._loop.call_later(LINGER, self.finish)

    def finish(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport.close()


class _Deadlines:
    """The header deadline and the lingering close, shared by both protocols below; each
    says when a request's headers are all in (`_disarm`)."""

    loop: asyncio.AbstractEventLoop
    transport: Any

    def _setup(self) -> None:
        self._header_deadline: asyncio.TimerHandle | None = None
        self._header_timeout = client_timeout()

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(self._header_timeout, self._expire)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _waiting_for_headers(self) -> bool:
        return True  # the timer runs only until the headers are in

    def _expire(self) -> None:
        self._header_deadline = None
        # Only a connection still waiting for (the rest of) a request's headers.
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()

    def _lingering(self) -> bool:
        return isinstance(self.transport, _LingeringTransport) and self.transport.lingering

    def connection_made(self, transport: Any) -> None:
        super().connection_made(_LingeringTransport(transport, self.loop))  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._lingering():
            self.transport.finish()
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self._lingering():
            return  # the rest of a body after the answer: read and dropped
        super().data_received(data)  # type: ignore[misc]

    def eof_received(self) -> bool | None:
        if self._lingering():
            self.transport.finish()  # the client is done too
            return None
        return super().eof_received()  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._arm()  # the next request's headers get the same deadline


class TimedH11Protocol(_Deadlines, H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._setup()

    def _waiting_for_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the headers are in


class TimedHttpToolsProtocol(_Deadlines, HttpToolsProtocol):
    """The same on httptools' parser (C, several times h11's speed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._setup()

    def on_headers_complete(self) -> None:
        self._disarm()  # the headers are in
        super().on_headers_complete()
