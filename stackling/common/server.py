"""uvicorn's HTTP/1.1 protocol with a deadline for a request's headers.

uvicorn closes idle keep-alive connections (`timeout_keep_alive`), but a connection that
never finishes its headers (slowloris) is held forever. This protocol closes a connection
whose headers have not all arrived `client_timeout` seconds after it opened or after the
previous response. A slow body is the ASGI layer's (common/limits.py: 408). The timeout
comes from the environment (`STACKLING_HTTP__CLIENT_TIMEOUT`), which `stackling serve`
sets for its worker processes too.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def client_timeout() -> float:
    try:
        return float(os.environ.get("STACKLING_HTTP__CLIENT_TIMEOUT", "60"))
    except ValueError:
        return 60.0


class TimedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._header_timeout = client_timeout()

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(self._header_timeout, self._expire)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _expire(self) -> None:
        self._header_deadline = None
        # Only a connection still waiting for (the rest of) a request's headers.
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the headers are in

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request's headers get the same deadline
