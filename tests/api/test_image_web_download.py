"""web-download's filter and time limits (item 8), on SQLite, PostgreSQL and
MariaDB: Glance's [import_filtering_opts] defaults (schemes http/https, ports 80/443),
applied to the first URI, after every redirect and to every address the host resolves
to; addresses off the public internet (loopback, private, link-local) only once
`image.web_download_allowed_networks` lists them; an overall deadline and a minimum
transfer rate. A listener on the machine is never read unless allowed.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api import test_image_storage_full as full
from tests.api.test_image_storage_full import FULL, V2, _no_data, _queued, _show, _stays_queued
from tests.conftest import make_api

SECRET = b"a listener's secret, never image data"
bapi, enospc = full.bapi, full.enospc  # fixtures: a cloud per backend, failing writes


# ------------------------------------------------------------------ servers
class Listener:
    """A loopback HTTP server on a random port; `routes` maps a path to a handler
    function(handler); `hits` lists the paths asked for."""

    def __init__(self, routes: dict[str, Any]) -> None:
        self.hits: list[str] = []
        self.stop = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self):  # noqa: N802
                owner.hits.append(self.path)
                route = routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_error(404)
                    return
                try:
                    route(self)
                except OSError:  # the client gave up (a cut download)
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def _answer(data: bytes):
    def route(h):
        h.send_response(200)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
    return route


def _redirect(location_of):
    def route(h):
        h.send_response(302)
        h.send_header("Location", location_of())
        h.send_header("Content-Length", "0")
        h.end_headers()
    return route


def _drip(owner: list, *, headers_too: bool = False, size: int = 100, every: float = 0.05):
    """A byte every `every` seconds (the headers too, if asked), `size` bytes in all."""
    def route(h):
        stop = owner[0].stop
        head = (f"HTTP/1.0 200 OK\r\nContent-Length: {size}\r\n\r\n").encode()
        if headers_too:
            for i in range(len(head)):
                if stop.wait(every):
                    return
                h.wfile.write(head[i:i + 1])
                h.wfile.flush()
        else:
            h.wfile.write(head)
            h.wfile.flush()
        for _ in range(size):
            if stop.wait(every):
                return
            h.wfile.write(b"x")
            h.wfile.flush()
    return route


@pytest.fixture
def secret() -> Iterator[Listener]:
    """A listener on the machine holding something no image may contain."""
    server = Listener({"/secret": _answer(SECRET)})
    yield server
    server.close()


@pytest.fixture
def mirror(secret: Listener) -> Iterator[Listener]:
    """A local mirror: /data answers image data, /to-secret redirects to the secret
    listener, /to-data to its own /data, /to-file to a file:// URI; /drip* drip."""
    box: list[Listener] = []
    server = Listener({
        "/data": _answer(b"mirrored image data " * 100),
        "/to-secret": _redirect(lambda: f"{secret.url}/secret"),
        "/to-data": _redirect(lambda: "/data"),
        "/to-file": _redirect(lambda: "file:///etc/passwd"),
        "/to-evil": _redirect(lambda: f"http://evil.example:{box[0].port}/data"),
        "/drip": _drip(box),
        "/drip-headers": _drip(box, headers_too=True),
    })
    box.append(server)
    yield server
    server.close()


def _allow(monkeypatch, api, ports: list[int], networks: list[str] | None = None,
           **more: Any) -> None:
    """What an operator sets to allow a local mirror (README: web-download)."""
    image = api.runtime.settings.image
    monkeypatch.setattr(image, "web_download_allowed_ports", ports, raising=False)
    monkeypatch.setattr(image, "web_download_allowed_networks",
                        ["127.0.0.0/8"] if networks is None else networks, raising=False)
    for key, value in more.items():
        monkeypatch.setattr(image, f"web_download_{key}", value, raising=False)


# ------------------------------------------------------------------ helpers
def _import(api, image: str, uri: str):
    return api.post(f"{V2}/images/{image}/import", user="demo",
                    json={"method": {"name": "web-download", "uri": uri}})


def _failure(api, image: str) -> str:
    """The message of the image's one failed import task."""
    tasks = [t for t in api.get(f"{V2}/tasks?status=failure", user="admin").json()["tasks"]
             if t["image_id"] == image]
    assert len(tasks) == 1, tasks
    return api.get(f"{V2}/tasks/{tasks[0]['id']}", user="admin").json()["message"]



# ------------------------------------------------------------------ tests
def test_a_loopback_listener_is_not_read_by_default(bapi, secret):
    """Glance's default ports (80, 443) and no network outside the internet allowed: a
    listener on the machine on another port is refused (400) before any connection."""
    image = _queued(bapi)
    for uri in (f"{secret.url}/secret", f"http://localhost:{secret.port}/secret",
                f"http://[::1]:{secret.port}/secret", f"http://2130706433:{secret.port}/secret",
                f"http://127.1:{secret.port}/secret"):
        r = _import(bapi, image, uri)
        assert r.status_code == 400, (uri, r.text)
        assert "does not pass filtering" in r.json()["message"]
    assert secret.hits == []
    _stays_queued(bapi, image)


def test_an_allowed_port_alone_does_not_open_loopback(bapi, secret, monkeypatch):
    """The port allowed but no network: loopback, private and link-local addresses are
    refused, whether named by address or by a name resolving to one (any of its
    addresses: a name resolving to one public and one loopback address is refused)."""
    _allow(monkeypatch, bapi, [secret.port], networks=[])
    image = _queued(bapi)
    for uri in (f"{secret.url}/secret", f"http://localhost:{secret.port}/secret",
                f"http://169.254.169.254:{secret.port}/latest",
                f"http://10.0.0.1:{secret.port}/x", f"http://[::ffff:127.0.0.1]:{secret.port}/x"):
        assert _import(bapi, image, uri).status_code == 400, uri
    real = socket.getaddrinfo

    def two_faced(host, *args, **kwargs):
        if host == "mirror.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", secret.port)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", secret.port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", two_faced)
    assert _import(bapi, image, f"http://mirror.example:{secret.port}/secret").status_code == 400
    assert secret.hits == []
    _stays_queued(bapi, image)


def test_a_local_mirror_is_fetched_once_allowed(bapi, mirror, secret, monkeypatch):
    """The documented allowance (its port and its network) opens that mirror only: the
    secret listener on the same address but another port stays refused."""
    _allow(monkeypatch, bapi, [mirror.port])
    image = _queued(bapi)
    assert _import(bapi, image, f"{secret.url}/secret").status_code == 400
    r = _import(bapi, image, f"{mirror.url}/data")
    assert r.status_code == 202, r.text
    assert _show(bapi, image)["status"] == "active"
    assert bapi.get(f"{V2}/images/{image}/file", user="demo").content == b"mirrored image data " * 100
    assert secret.hits == []


def test_redirects_are_filtered_at_every_hop(bapi, mirror, secret, monkeypatch):
    """A redirect to an allowed URL is followed; one to a forbidden port, scheme or
    address fails the import as Glance's does (a failure task, the image queued), and the
    forbidden URL is never asked."""
    _allow(monkeypatch, bapi, [mirror.port])
    image = _queued(bapi)
    assert _import(bapi, image, f"{mirror.url}/to-data").status_code == 202
    assert _show(bapi, image)["status"] == "active"
    for path, target in (("/to-secret", f"{secret.url}/secret"),
                         ("/to-file", "file:///etc/passwd")):
        image = _queued(bapi)
        r = _import(bapi, image, f"{mirror.url}{path}")
        assert r.status_code == 202, r.text
        assert _failure(bapi, image) == f"Redirect to disallowed URL: {target}"
        _stays_queued(bapi, image)
    # a name resolving to an allowed and a forbidden address: refused at the redirect
    real = socket.getaddrinfo

    def two_faced(host, *args, **kwargs):
        if host == "evil.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", mirror.port)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", mirror.port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", two_faced)
    image = _queued(bapi)
    assert _import(bapi, image, f"{mirror.url}/to-evil").status_code == 202
    assert _failure(bapi, image) == (f"Redirect to disallowed URL: "
                                     f"http://evil.example:{mirror.port}/data")
    _stays_queued(bapi, image)
    assert secret.hits == []
    assert mirror.hits.count("/data") == 1  # only the first, allowed redirect reached it


def test_a_redirect_to_a_forbidden_url_marks_the_stores_failed(tmp_path, mirror, secret,
                                                                  monkeypatch):
    """Multi-store: the refused import leaves the image queued, importing to no store and
    the target stores in os_glance_failed_import (Glance's revert)."""
    for api in make_api(tmp_path / "ms", image={"stores": ["fast", "cheap"]}):
        _allow(monkeypatch, api, [mirror.port])
        image = _queued(api)
        r = api.post(f"{V2}/images/{image}/import", user="demo", json={
            "method": {"name": "web-download", "uri": f"{mirror.url}/to-secret"},
            "all_stores": True})
        assert r.status_code == 202, r.text
        shown = _show(api, image)
        assert shown["status"] == "queued"
        assert shown["os_glance_importing_to_stores"] == ""
        assert shown["os_glance_failed_import"] == "cheap,fast"
        _no_data(api, image)
    assert secret.hits == []


@pytest.mark.parametrize("path", ["/drip", "/drip-headers"])
def test_a_dripping_server_is_cut_at_the_deadline(bapi, mirror, monkeypatch, path):
    """A byte every 50 ms (body, or headers too) never trips the per-read timeout; the
    overall deadline (here 1 s) ends the fetch: a failure task, the image queued."""
    _allow(monkeypatch, bapi, [mirror.port], timeout=1.0, min_rate=0)
    image = _queued(bapi)
    r = _import(bapi, image, f"{mirror.url}{path}")
    assert r.status_code == 202, r.text
    assert "did not complete within 1.0 s" in _failure(bapi, image)
    _stays_queued(bapi, image)


def test_a_dripping_server_is_cut_below_the_minimum_rate(bapi, mirror, monkeypatch):
    """20 bytes a second against a minimum of 1,000, judged once the read timeout (here
    0.5 s) has passed: cut long before the deadline."""
    _allow(monkeypatch, bapi, [mirror.port], timeout=60.0, min_rate=1000, read_timeout=0.5)
    image = _queued(bapi)
    r = _import(bapi, image, f"{mirror.url}/drip")
    assert r.status_code == 202, r.text
    assert "below the minimum of 1000 bytes a second" in _failure(bapi, image)
    _stays_queued(bapi, image)


def test_a_web_download_onto_a_full_disk_fails_its_task(bapi, mirror, monkeypatch, enospc):
    _allow(monkeypatch, bapi, [mirror.port])
    image = _queued(bapi)
    assert _import(bapi, image, f"{mirror.url}/data").status_code == 202
    assert _failure(bapi, image) == FULL
    _stays_queued(bapi, image)
