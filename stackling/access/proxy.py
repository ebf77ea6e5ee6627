"""`stackling proxy`: a SOCKS5 proxy on loopback whose connections start inside the cloud's
outside namespace, to the cloud's own addresses only; and `stackling connect`, the
ProxyCommand of `stackling ssh-config` (stdio relayed to one such connection).

Hand-written on asyncio (RFC 1928, CONNECT without authentication: what curl's
--socks5-hostname and browsers send): the small SOCKS server libraries on PyPI open their
upstream sockets themselves, with no hook to make them in another namespace or to
refuse a destination before connecting, and this is about a hundred lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import selectors
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from stackling.access import netns

VERSION = 5
NO_AUTH, NO_ACCEPTABLE = 0x00, 0xFF
CONNECT = 1
IPV4, DOMAIN, IPV6 = 1, 3, 4
# reply codes (RFC 1928, 6)
SUCCEEDED, FAILURE, NOT_ALLOWED, HOST_UNREACHABLE, REFUSED = 0x00, 0x01, 0x02, 0x04, 0x05
COMMAND_NOT_SUPPORTED, ADDRESS_NOT_SUPPORTED = 0x07, 0x08
REFRESH_AFTER = 2.0  # seconds: a miss reads the cloud's addresses again, at most this often


class CloudAddresses:
    """The addresses the proxy may connect to: the fixed IPs of the cloud's ports and its
    floating IPs, and server names to their first address (for --socks5-hostname vm1)."""

    def __init__(self, read: Callable[[], tuple[set[str], dict[str, str]]]) -> None:
        self._read = read
        self.addresses: set[str] = set()
        self.names: dict[str, str] = {}
        self._at = float("-inf")

    def refresh(self) -> None:
        self.addresses, self.names = self._read()
        self._at = time.monotonic()

    def resolve(self, host: str) -> str | None:
        """The address `host` stands for, if the cloud owns it."""
        for attempt in (0, 1):
            address = self.names.get(host, host)
            with contextlib.suppress(ValueError):
                address = str(ipaddress.ip_address(address))
            if address in self.addresses:
                return address
            if attempt or time.monotonic() - self._at < REFRESH_AFTER:
                return None
            self.refresh()
        return None


def read_cloud(conn: Any) -> tuple[set[str], dict[str, str]]:
    """What the connection's user sees of the cloud (an admin: every project's)."""
    from openstack import exceptions

    from stackling.access import ssh

    addresses = {ip["ip_address"] for port in conn.network.ports() for ip in port.fixed_ips}
    addresses |= {fip.floating_ip_address for fip in conn.network.ips()}
    names: dict[str, str] = {}
    try:  # an admin's list covers every project, as the ports' does
        servers = list(conn.compute.servers(details=True, all_projects=True))
    except exceptions.ForbiddenException:
        servers = list(conn.compute.servers(details=True))
    for server in servers:
        found = ssh.addresses(server.to_dict(original_names=True))
        if found:
            names.setdefault(server.name, found[0])
    return {str(ipaddress.ip_address(a)) for a in addresses}, names


def _reply(code: int) -> bytes:
    return bytes([VERSION, code, 0, IPV4, 0, 0, 0, 0, 0, 0])


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


class Socks5:
    def __init__(self, namespace: str, allowed: CloudAddresses,
                 log: Callable[[str], None] = lambda line: None) -> None:
        self.maker = netns.SocketMaker(namespace)
        self.allowed = allowed
        self.log = log

    @staticmethod
    async def _greeting(reader: asyncio.StreamReader) -> bool:
        """Whether the client offers no authentication (all this proxy speaks)."""
        ver, count = await reader.readexactly(2)
        if ver != VERSION:
            raise ValueError("not SOCKS5")
        return NO_AUTH in await reader.readexactly(count)

    @staticmethod
    async def _request(reader: asyncio.StreamReader) -> tuple[int, str, int]:
        """The client's request: (command, host, port); command < 0: an unknown address type."""
        _, command, _, kind = await reader.readexactly(4)
        if kind == IPV4:
            host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
        elif kind == IPV6:
            host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
        elif kind == DOMAIN:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        else:
            return -kind, "", 0
        port = int.from_bytes(await reader.readexactly(2), "big")
        return command, host, port

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        try:
            if not await self._greeting(reader):
                writer.write(bytes([VERSION, NO_ACCEPTABLE]))
                return
            writer.write(bytes([VERSION, NO_AUTH]))
            command, host, port = await self._request(reader)
            if command < 0:
                writer.write(_reply(ADDRESS_NOT_SUPPORTED))
                return
            if command != CONNECT:
                writer.write(_reply(COMMAND_NOT_SUPPORTED))
                return
            address = await loop.run_in_executor(None, self.allowed.resolve, host)
            if address is None:
                self.log(f"refused {host}:{port}: not an address of this cloud")
                writer.write(_reply(NOT_ALLOWED))
                return
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            upstream = self.maker.socket(family)
            try:
                await asyncio.wait_for(loop.sock_connect(upstream, (address, port)), 10)
            except (TimeoutError, OSError) as exc:
                upstream.close()
                code = REFUSED if isinstance(exc, ConnectionRefusedError) else HOST_UNREACHABLE
                writer.write(_reply(code))
                return
            self.log(f"connected {host}:{port} ({address})")
            up_reader, up_writer = await asyncio.open_connection(sock=upstream)
            writer.write(_reply(SUCCEEDED))
            await writer.drain()
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            up_writer.close()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            with contextlib.suppress(ConnectionError, OSError):
                await writer.drain()
            writer.close()

    async def serve(self, port: int, ready: Callable[[int], None]) -> None:
        server = await asyncio.start_server(self.handle, "127.0.0.1", port)
        ready(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()


def relay_stdio(namespace: str, host: str, port: int, timeout: float = 10) -> int:
    """Connect to host:port inside `namespace` and relay stdin/stdout to it until the
    remote end closes (ssh's ProxyCommand). Single-threaded, so the whole process may
    enter the namespace."""
    netns.enter(namespace)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        print(f"stackling connect: {host}:{port} in {namespace}: {exc}", file=sys.stderr)
        return 1
    sock.setblocking(True)
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ)
    sel.register(sock, selectors.EVENT_READ)
    stdin_open = True
    while True:
        for key, _ in sel.select():
            if key.fileobj == 0:
                data = os.read(0, 65536)
                if data:
                    sock.sendall(data)
                else:
                    stdin_open = False
                    sel.unregister(0)
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_WR)
            else:
                data = sock.recv(65536)
                if not data:
                    return 0
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view):]
        if not stdin_open and not sel.get_map():
            return 0
