"""The metadata service's bounds without root (issue 29 item 4): its sockets on loopback,
the same answers as before, per-guest and per-process connection limits, the idle and
request timeouts, the request size, and one thread for every connection."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from stackling.dataplane.metadata import Limits, MetadataServers, answer, peer_address

DOCS = {"latest/meta-data/hostname": "vm-one",
        "openstack/latest/meta_data.json": '{"uuid": "u-1"}'}
LIMITS = Limits(per_guest=2, total=3, idle_timeout=0.3, request_timeout=0.5,
                request_bytes=1024)
WAIT = 10.0  # a bound on waiting for a condition, not an expectation of its time


def _until(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while not check() and time.monotonic() < deadline:
        time.sleep(0.01)
    return check()


class Service:
    def __init__(self, limits: Limits = LIMITS) -> None:
        self.asked: list[tuple[str, str]] = []
        self.servers = MetadataServers(self._lookup, limits)
        self.ports: dict[str, int] = {}

    def _lookup(self, network_id: str, address: str) -> dict[str, Any] | None:
        self.asked.append((network_id, address))
        return DOCS if address == "127.0.0.1" else None

    def listen(self, network_id: str, bound_to: object = None) -> int:
        def make() -> socket.socket:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as kernel.listen_tcp
            sock.bind(("127.0.0.1", self.ports.get(network_id, 0)))
            sock.listen(16)
            self.ports[network_id] = sock.getsockname()[1]
            return sock

        self.servers.ensure(network_id, make, bound_to=bound_to)
        return self.ports[network_id]

    def connect(self, network_id: str = "net-1", source: str = "127.0.0.1") -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.ports[network_id]), timeout=WAIT,
                                        source_address=(source, 0))
        return sock


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service()
    svc.listen("net-1")
    yield svc
    svc.servers.stop_all()


def _read_all(sock: socket.socket) -> bytes:
    """Everything until the service closes (a reset ends it too)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def _get(svc: Service, path: str, source: str = "127.0.0.1") -> tuple[str, dict[str, str], bytes]:
    with svc.connect(source=source) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 169.254.169.254\r\n\r\n".encode())
        data = _read_all(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    return status, dict(line.split(": ", 1) for line in lines), body


def _refused(svc: Service, network_id: str = "net-1", source: str = "127.0.0.1") -> bool:
    """The service resets a new connection without an answer (on loopback the reset may
    come before connect() returns)."""
    try:
        sock = svc.connect(network_id, source)
    except ConnectionResetError:
        return True
    with sock:
        return _read_all(sock) == b""


def test_the_answers_are_those_of_before(service: Service) -> None:
    status, headers, body = _get(service, "/latest/meta-data/hostname")
    assert (status, body) == ("HTTP/1.0 200 OK", b"vm-one")
    assert headers["Content-Type"] == "text/plain" and headers["Content-Length"] == "6"
    status, headers, body = _get(service, "/openstack/latest/meta_data.json?x=1")
    assert (status, body, headers["Content-Type"]) == (
        "HTTP/1.0 200 OK", b'{"uuid": "u-1"}', "application/json")
    status, headers, body = _get(service, "/openstack/latest/nothing.json")
    assert (status, body, headers["Content-Length"]) == ("HTTP/1.0 404 Not Found",
                                                         b"404 Not Found", "13")
    status, _, body = _get(service, "/latest/meta-data/hostname", source="127.0.0.2")
    assert (status, body) == ("HTTP/1.0 403 Forbidden", b"403 Forbidden")
    # the lookup is asked with the socket's network and the peer's address
    assert service.asked[-1] == ("net-1", "127.0.0.2")


def test_a_request_with_bare_newlines_or_sent_in_pieces_is_answered(service: Service) -> None:
    with service.connect() as sock:
        for piece in (b"GET /latest/meta-data/host", b"name HTTP/1.0\r\nHost: x\r\n\r", b"\n"):
            sock.sendall(piece)
        assert _read_all(sock).endswith(b"\r\n\r\nvm-one")
    with service.connect() as sock:
        sock.sendall(b"GET /latest/meta-data/hostname HTTP/1.0\n\n")
        assert _read_all(sock).startswith(b"HTTP/1.0 200 OK\r\n")


def test_answer_refuses_what_is_not_a_get() -> None:
    assert answer(DOCS, b"POST / HTTP/1.0")[0] == 501
    assert answer(DOCS, b"GET /")[0] == 400
    assert answer(DOCS, b"garbage")[0] == 400


def test_an_ipv6_peer_is_known_by_its_address_without_a_zone() -> None:
    assert peer_address(("fe80::f816:3eff:fe00:1%tap0", 40000, 0, 7)) == "fe80::f816:3eff:fe00:1"
    assert peer_address(("10.0.0.5", 40000)) == "10.0.0.5"
    assert peer_address(None) is None


def test_an_idle_connection_is_closed(service: Service) -> None:
    with service.connect() as sock:
        assert _until(lambda: service.servers.open_connections() == 1)
        assert _read_all(sock) == b""  # closed without a word
    assert _until(lambda: service.servers.open_connections() == 0)


def test_an_oversized_request_is_refused_and_closed(service: Service) -> None:
    with service.connect() as sock:  # headers beyond request_bytes
        sock.sendall(b"GET /latest/meta-data/hostname HTTP/1.0\r\n" + b"X-Pad: x\r\n" * 200)
        assert _read_all(sock).startswith(b"HTTP/1.0 431 Request Header Fields Too Large\r\n")
    with service.connect() as sock:  # a request line beyond it
        sock.sendall(b"GET /" + b"a" * 2000)
        assert _read_all(sock).startswith(b"HTTP/1.0 414 ")
    assert _until(lambda: service.servers.open_connections() == 0)


def test_a_slow_header_drip_is_cut(service: Service) -> None:
    """A byte at a time, each within the idle timeout: the request timeout ends it, long
    before the size bound would."""
    sent = 0
    with service.connect() as sock:
        sock.sendall(b"GET /latest/meta-data/hostname HTTP/1.0\r\n")
        sent = 42
        cut = False
        while sent < LIMITS.request_bytes:
            try:
                sock.sendall(b"X" if sent % 20 else b"\n")
            except OSError:
                cut = True
                break
            sent += 1
            ready, _, _ = select.select([sock], [], [], 0.05)
            if ready:
                cut = True
                break
        assert cut and sent < LIMITS.request_bytes
        assert _read_all(sock).startswith(b"HTTP/1.0 408 Request Timeout\r\n")


def test_a_guest_beyond_its_limit_is_refused_at_once(service: Service) -> None:
    held = [service.connect(), service.connect()]
    assert _until(lambda: service.servers.open_connections() == 2)
    assert _refused(service)
    assert service.servers.open_connections() == 2
    # another guest still gets in; the process's cap (3) refuses the next one of anyone's
    other = service.connect(source="127.0.0.2")
    assert _until(lambda: service.servers.open_connections() == 3)
    assert _refused(service, source="127.0.0.3")
    # one closed, the guest gets an answer again
    held.pop().close()
    assert _until(lambda: service.servers.open_connections() == 2)
    assert _get(service, "/latest/meta-data/hostname")[0] == "HTTP/1.0 200 OK"
    for sock in [*held, other]:
        sock.close()
    assert _until(lambda: service.servers.open_connections() == 0)


def test_a_guest_is_counted_per_network() -> None:
    svc = Service(Limits(per_guest=1, total=10, idle_timeout=WAIT, request_timeout=WAIT,
                         request_bytes=1024))
    try:
        svc.listen("net-1")
        svc.listen("net-2")
        one, two = svc.connect("net-1"), svc.connect("net-2")
        assert _until(lambda: svc.servers.open_connections() == 2)
        assert _refused(svc, "net-1")
        one.close()
        two.close()
    finally:
        svc.servers.stop_all()


def test_connections_take_no_thread_each() -> None:
    svc = Service(Limits(per_guest=50, total=100, idle_timeout=WAIT, request_timeout=WAIT,
                         request_bytes=1024))
    try:
        svc.listen("net-1")
        threads = threading.active_count()
        held = [svc.connect() for _ in range(40)]
        assert _until(lambda: svc.servers.open_connections() == 40)
        assert threading.active_count() == threads
        for sock in held:
            sock.close()
        assert _until(lambda: svc.servers.open_connections() == 0)
    finally:
        svc.servers.stop_all()


def test_stop_closes_the_socket_and_cuts_its_connections() -> None:
    svc = Service(Limits(per_guest=5, total=10, idle_timeout=WAIT, request_timeout=WAIT,
                         request_bytes=1024))
    svc.listen("net-1")
    held = svc.connect()
    assert _until(lambda: svc.servers.open_connections() == 1)
    # a new binding: the old socket is closed first, so the same address binds again
    svc.listen("net-1", bound_to="link 2")
    assert _read_all(held) == b"" and svc.servers.open_connections() == 0
    assert svc.servers.networks() == {"net-1"}
    assert _get(svc, "/latest/meta-data/hostname")[0] == "HTTP/1.0 200 OK"
    svc.servers.stop_all()
    assert svc.servers.networks() == set()
    assert not [t for t in threading.enumerate() if t.name == "metadata"]
    with pytest.raises(ConnectionRefusedError):
        svc.connect()
