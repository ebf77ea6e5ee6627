"""The metadata service at 169.254.169.254, as Nova's: `openstack/latest/{meta_data.json,
network_data.json,user_data}` and the EC2-style `latest/meta-data/...` and `latest/user-data`.

It listens inside each network's DHCP namespace (the route to 169.254.169.254 that DHCP
hands out points there), so a request's network is the socket it came in on and its
source address names the port, hence the one server it answers for, as Neutron's
metadata proxy tags each request with its network for Nova. On a network with IPv6 subnets
it also listens at fe80::a9fe:a9fe on the DHCP port's link, as Neutron's DHCP agent does
since Wallaby, so a guest with no IPv4 gets its key too; it asks from its link-local address,
the EUI-64 of its port's MAC (which anti-spoofing holds it to).

It is bounded as Neutron's haproxy metadata proxy is (`maxconn`, `timeout http-request`,
per-source limits; issue 29): one event loop thread serves every socket (no thread per
connection), a guest (a source address on a network) holds at most
`dataplane.metadata_connections_per_guest` connections and the process at most
`dataplane.metadata_connections`; beyond either a connection is reset as it is accepted. A
connection that asks nothing within `metadata_idle_timeout` seconds, or whose request line and
headers take more than `metadata_request_timeout` seconds (a slow drip) or
`metadata_request_bytes` bytes, is answered 408, 414 or 431 and closed. Answers are HTTP/1.0,
one per connection, as http.server gave them.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import re
import socket
import struct
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stackling.config import DataplaneSettings

LOG = logging.getLogger(__name__)

METADATA_IPV6 = "fe80::a9fe:a9fe"
# (network id, source address) -> what the server's metadata says, or None. Called on the
# serving loop's thread: it must not block (the reconciler's reads a dict its passes fill).
Lookup = Callable[[str, str], dict[str, Any] | None]


def documents(server: dict[str, Any], ports: list[dict[str, Any]],
              subnets: dict[str, dict[str, Any]], networks: dict[str, dict[str, Any]]
              ) -> dict[str, bytes | str]:
    """Every path this server's guest may ask for, and its body."""
    hostname = server["hostname"] or server["name"]
    keys = {}
    if server.get("key_data"):
        keys = {server.get("key_name") or "key": server["key_data"]}
    meta = {"uuid": server["id"], "name": server["name"], "hostname": hostname,
            "availability_zone": server.get("availability_zone"),
            "project_id": server["project_id"], "launch_index": 0,
            "meta": server.get("metadata") or {},
            "public_keys": keys,
            "keys": [{"name": n, "type": "ssh", "data": k} for n, k in keys.items()],
            "devices": []}
    links, nets = [], []
    for i, port in enumerate(ports):
        tap = "tap" + port["id"][:11]
        net = networks.get(port["network_id"], {})
        links.append({"id": tap, "vif_id": port["id"], "type": "ovs",
                      "mtu": net.get("mtu"), "ethernet_mac_address": port["mac_address"]})
        for j, ip in enumerate(port["fixed_ips"]):
            subnet = subnets.get(ip["subnet_id"])
            if subnet is None:
                continue
            v6 = subnet["ip_version"] == 6
            routes = [{"network": "::" if v6 else "0.0.0.0", "netmask": "::" if v6 else "0.0.0.0",
                       "gateway": subnet["gateway_ip"]}] if subnet.get("gateway_ip") else []
            kind = "ipv6_dhcp" if v6 else "ipv4_dhcp"
            if v6 and subnet.get("ipv6_address_mode"):  # as Nova names them: how cloud-init
                kind = f"ipv6_{subnet['ipv6_address_mode']}"  # configures the interface
            nets.append({"id": f"network{i}-{j}", "link": tap, "network_id": port["network_id"],
                         "type": kind, "ip_address": ip["ip_address"], "routes": routes,
                         "services": [{"type": "dns", "address": d}
                                      for d in subnet.get("dns_nameservers") or []]})
    network_data = {"links": links, "networks": nets, "services": []}
    out: dict[str, bytes | str] = {
        "openstack/latest/meta_data.json": json.dumps(meta),
        "openstack/latest/network_data.json": json.dumps(network_data),
        "openstack/latest/vendor_data.json": "{}",
        "openstack/latest/vendor_data2.json": "{}",
        "openstack/latest": "meta_data.json\nnetwork_data.json\nvendor_data.json\n"
                            "vendor_data2.json" + ("\nuser_data" if server.get("user_data") else ""),
        "openstack": "latest",
        "latest/meta-data/hostname": hostname,
        "latest/meta-data/local-hostname": hostname,
        "latest/meta-data/instance-id": server["id"],
        "latest/meta-data/local-ipv4": next(
            (ip["ip_address"] for p in ports for ip in p["fixed_ips"] if ":" not in ip["ip_address"]),
            ""),
        "latest/meta-data": "hostname\ninstance-id\nlocal-hostname\nlocal-ipv4"
                            + ("\npublic-keys/" if keys else ""),
    }
    if keys:
        name, key = next(iter(keys.items()))
        out["latest/meta-data/public-keys"] = f"0={name}"
        out["latest/meta-data/public-keys/0"] = "openssh-key"
        out["latest/meta-data/public-keys/0/openssh-key"] = key
    if server.get("user_data"):
        out["openstack/latest/user_data"] = server["user_data"]
        out["latest/user-data"] = server["user_data"]
    return out


@dataclass(frozen=True)
class Limits:
    """The service's bounds (config.py's `dataplane.metadata_*`)."""

    per_guest: int  # open connections of one source address on one network
    total: int  # open connections of this process, every network's
    idle_timeout: float  # seconds before a request starts (and for an answer to be read)
    request_timeout: float  # seconds from a request's first byte to its headers' end
    request_bytes: int  # the request line and headers at most

    @classmethod
    def of(cls, dp: DataplaneSettings) -> Limits:
        return cls(dp.metadata_connections_per_guest, dp.metadata_connections,
                   dp.metadata_idle_timeout, dp.metadata_request_timeout,
                   dp.metadata_request_bytes)

    @classmethod
    def configured(cls) -> Limits:
        """The process's settings (environment and configuration file), read here: the
        reconciler that makes MetadataServers is given no settings."""
        from stackling.config import load_settings

        return cls.of(load_settings().dataplane)


_HEAD_END = re.compile(rb"\r?\n\r?\n")  # the blank line after the headers (bare LF too)
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection


def peer_address(peer: Any) -> str | None:
    """The guest's address from a peer name: an IPv6 peer is (address, port, flow, scope),
    its address without a zone."""
    if not peer:
        return None
    return str(peer[0]).split("%", 1)[0]


def answer(docs: dict[str, bytes | str] | None, head: bytes) -> tuple[int, bytes, str]:
    """(status, body, content type) for a request's line and headers, as the service always
    answered: 200 with the document, 404 for a path it does not have, 403 for a source it
    does not know (`docs` None)."""
    words = head.split(b"\n", 1)[0].decode("latin-1").split()
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        return _plain(HTTPStatus.BAD_REQUEST)
    if words[0] != "GET":
        return _plain(HTTPStatus.NOT_IMPLEMENTED)
    path = words[1].split("?", 1)[0].strip("/")
    ctype = "application/json" if path.endswith(".json") else "text/plain"
    if docs is None:
        return 403, b"403 Forbidden", ctype
    body = docs.get(path)
    if body is None:
        return 404, b"404 Not Found", ctype
    return 200, body.encode() if isinstance(body, str) else body, ctype


def _plain(status: HTTPStatus) -> tuple[int, bytes, str]:
    return status.value, f"{status.value} {status.phrase}".encode(), "text/plain"


def response(status: int, body: bytes, ctype: str) -> bytes:
    head = (f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\n"
            f"Server: stackling-metadata\r\n"
            f"Date: {email.utils.formatdate(usegmt=True)}\r\n"
            f"Content-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


class _Connection(asyncio.Protocol):
    """One guest's connection: its request read within the bounds, one answer, closed."""

    def __init__(self, owner: MetadataServers, network_id: str, version: int) -> None:
        self.owner, self.network_id, self.key = owner, network_id, (network_id, version)
        self.transport: asyncio.Transport | None = None
        self.guest: tuple[str, str] | None = None  # (network, address) once admitted
        self.buf = b""
        self.answered = False
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        address = peer_address(transport.get_extra_info("peername"))
        if address is None or not self.owner._admit(self, (self.network_id, address)):
            sock = transport.get_extra_info("socket")
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            except OSError:
                pass
            transport.abort()
            return
        self._arm(self.owner.limits.idle_timeout)

    def data_received(self, data: bytes) -> None:
        if self.answered or self.guest is None:
            return
        limits = self.owner.limits
        if not self.buf:  # the request started: its headers have request_timeout to arrive
            self._arm(limits.request_timeout)
        # the end may straddle the last chunk: search from a few bytes before it
        start = max(0, len(self.buf) - 3)
        self.buf += data
        end = _HEAD_END.search(self.buf, start)
        if end is not None and end.start() <= limits.request_bytes:
            try:
                docs = self.owner.lookup(self.network_id, self.guest[1])
                self._answer(*answer(docs, self.buf[:end.start()]))
            except Exception:  # noqa: BLE001 - one request's failure, not the loop's
                LOG.exception("metadata %s: answering %s", self.network_id, self.guest[1])
                self._answer(*_plain(HTTPStatus.INTERNAL_SERVER_ERROR))
        elif len(self.buf) > limits.request_bytes:
            line_ended = b"\n" in self.buf[:limits.request_bytes]
            self._answer(*_plain(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE if line_ended
                                 else HTTPStatus.REQUEST_URI_TOO_LONG))

    def eof_received(self) -> bool:
        return self.answered  # a request cut short is closed; an answer is sent out first

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.owner._release(self)

    def _arm(self, seconds: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(seconds, self._expired)

    def _expired(self) -> None:
        assert self.transport is not None
        if self.buf and not self.answered:  # a request that took too long: 408, as haproxy
            self._answer(*_plain(HTTPStatus.REQUEST_TIMEOUT))
        else:  # nothing asked, or an answer the guest does not read
            self.transport.abort()

    def _answer(self, status: int, body: bytes, ctype: str) -> None:
        assert self.transport is not None
        self.answered = True
        self.buf = b""
        LOG.debug("metadata %s: %s %s", self.network_id, self.guest and self.guest[1], status)
        self.transport.write(response(status, body, ctype))
        self.transport.close()  # once written; a guest that does not read it is cut later
        self._arm(self.owner.limits.idle_timeout)


class MetadataServers:
    """A listening socket per network and family (in its DHCP namespace), all served by one
    event loop thread within `Limits`."""

    def __init__(self, lookup: Lookup, limits: Limits | None = None) -> None:
        self.lookup = lookup
        self.limits = limits or Limits.configured()
        # (network, IP version) -> its server and what its socket was bound to
        self.servers: dict[tuple[str, int], tuple[asyncio.Server, object]] = {}
        self._lock = threading.Lock()  # ensure/stop come from the dataplane's threads
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # the loop thread's alone: open connections per guest and per server, and in all
        self._open: dict[tuple[str, str], int] = {}
        self._conns: dict[tuple[str, int], set[_Connection]] = {}
        self._total = 0
        self._over: set[tuple[str, str]] = set()  # guests refused since they were last under

    def networks(self) -> set[str]:
        return {network_id for network_id, _ in self.servers}

    def open_connections(self) -> int:
        """How many connections the service holds open, every network's."""
        return self._total

    def ensure(self, network_id: str, make_socket: Callable[[], socket.socket],
               version: int = 4, bound_to: object = None) -> None:
        """Listening, once; again when `bound_to` changed (an IPv6 socket is bound to its
        link's index, which a link plugged anew does not have)."""
        with self._lock:
            if (network_id, version) in self.servers:
                if self.servers[(network_id, version)][1] == bound_to:
                    return
                self._stop(network_id, (version,))
            sock = make_socket()
            try:
                loop = self._running_loop()

                async def serve() -> asyncio.Server:
                    return await loop.create_server(
                        lambda: _Connection(self, network_id, version), sock=sock,
                        backlog=128)

                server = self._call(serve())
            except BaseException:
                sock.close()
                raise
            self.servers[(network_id, version)] = (server, bound_to)

    def stop(self, network_id: str, versions: tuple[int, ...] = (4, 6)) -> None:
        with self._lock:
            self._stop(network_id, versions)

    def stop_all(self) -> None:
        """Every socket closed, every connection cut, and the loop thread ended."""
        with self._lock:
            for network_id in self.networks():
                self._stop(network_id)
            loop, thread = self._loop, self._thread
            if loop is None or thread is None:
                return
            self._loop = self._thread = None
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
            if not thread.is_alive():
                loop.close()

    # ------------------------------------------------------------------ the loop's side
    def _stop(self, network_id: str, versions: tuple[int, ...] = (4, 6)) -> None:
        for version in versions:
            server, _ = self.servers.pop((network_id, version), (None, None))
            if server is None:
                continue

            async def close(server: asyncio.Server = server, key: tuple[str, int] = (
                    network_id, version)) -> None:
                server.close()  # the listening socket, at once
                for conn in list(self._conns.get(key, ())):
                    if conn.transport is not None:
                        conn.transport.abort()
                await asyncio.sleep(0)  # their sockets close (connection_lost) in this turn

            self._call(close())

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=loop.run_forever, name="metadata",
                                            daemon=True)
            self._thread.start()
            self._loop = loop
        return self._loop

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def _admit(self, conn: _Connection, guest: tuple[str, str]) -> bool:
        held = self._open.get(guest, 0)
        if held >= self.limits.per_guest or self._total >= self.limits.total:
            if guest not in self._over:  # once per flood, not per connection
                self._over.add(guest)
                LOG.warning("metadata %s: %s refused: %d of its %d connections open, %d of "
                            "the process's %d", guest[0], guest[1], held,
                            self.limits.per_guest, self._total, self.limits.total)
            return False
        conn.guest = guest
        self._open[guest] = held + 1
        self._conns.setdefault(conn.key, set()).add(conn)
        self._total += 1
        return True

    def _release(self, conn: _Connection) -> None:
        guest = conn.guest
        if guest is None:
            return
        conn.guest = None
        self._total -= 1
        self._conns[conn.key].discard(conn)
        if not self._conns[conn.key]:
            del self._conns[conn.key]
        left = self._open[guest] - 1
        if left:
            self._open[guest] = left
        else:
            del self._open[guest]
        if left < self.limits.per_guest:
            self._over.discard(guest)
