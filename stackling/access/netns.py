"""Sockets opened inside a network namespace, from a process that stays outside it.

setns(2) with CLONE_NEWNET moves only the calling thread, and a socket belongs to the
namespace it was created in for its whole life: a thread that entered the namespace makes
the sockets, any thread then uses them. Python 3.11 has no os.setns: libc's, by ctypes.
"""

from __future__ import annotations

import ctypes
import os
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def path(namespace: str) -> Path:
    return Path("/run/netns") / namespace


def enter(namespace: str) -> None:
    """Move the calling thread into `namespace` (as `ip netns exec` does for a process)."""
    fd = os.open(path(namespace), os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {namespace}: {os.strerror(err)}")
    finally:
        os.close(fd)


class SocketMaker:
    """One thread living in `namespace` that makes the sockets (never connects them, so
    it is never busy for long)."""

    def __init__(self, namespace: str) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"netns-{namespace}",
                                        initializer=enter, initargs=(namespace,))
        self._pool.submit(lambda: None).result()  # a missing namespace fails here, at once

    def socket(self, family: int) -> socket.socket:
        sock = self._pool.submit(socket.socket, family, socket.SOCK_STREAM).result()
        sock.setblocking(False)
        return sock

    def close(self) -> None:
        self._pool.shutdown(wait=False)
