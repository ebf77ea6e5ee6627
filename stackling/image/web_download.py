"""Glance's `web-download` import method, local: the image's data is fetched from a URI.

The URI is filtered as Glance's [import_filtering_opts] filter it, with its defaults
(settings `image.web_download_*`): allowed schemes http and https (`disallowed_schemes`
otherwise), allowed hosts any (`disallowed_hosts` otherwise), allowed ports 80 and 443
(`disallowed_ports` otherwise); a list of allowed values makes its disallowed list
ignored, as Glance's. The port filtered is the one connected to (the scheme's when the URI
names none). Hosts spelled as numbers that are not an address (`2130706433`, `127.1`) are
refused, as Glance refuses them. Beyond Glance:

- the host filter applies to the name *and* to every address it resolves to (a host is
  allowed when named in `allowed_hosts` or when all its addresses are; refused when it or
  any of its addresses is in `disallowed_hosts`);
- every address the host resolves to must be on the public internet (`ipaddress`'s
  `is_global`, and not multicast; an IPv4 address inside an IPv6 one is judged as the IPv4
  one) unless it is in one of `image.web_download_allowed_networks` (CIDRs, empty by
  default): loopback, private, link-local (the metadata address 169.254.169.254), shared
  and reserved addresses are refused by default. This is how a local mirror is allowed:
  its network in `web_download_allowed_networks`, its port in `web_download_allowed_ports`;
- URIs carrying credentials are refused.

The connection goes to the address checked (no second lookup a DNS answer could change).
Redirects are followed (at most 10, as urllib's in Glance) and each new URI is filtered
again, as Glance's SafeRedirectHandler does: a refused one ends the fetch. The body streams
to a staging file, capped at `http.image_size_cap`; the fetch as a whole (connecting,
redirects, headers, body) ends after `web_download_timeout` seconds, the body must average
`web_download_min_rate` bytes a second once `web_download_read_timeout` seconds have
passed, and a server silent that long is given up.

Glance answers 202 and fetches in the background; here the fetch runs in the request, and
a failed fetch is what Glance's would be: a `failure` task and the image still `queued`.
"""

from __future__ import annotations

import http.client
import ipaddress
import math
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from stackling.common import storage
from stackling.common.errors import BadRequest
from stackling.image.errors import StorageMediaFull

_CHUNK = 1 << 20
MAX_REDIRECTS = 10  # urllib's HTTPRedirectHandler.max_redirections
_REDIRECTS = (301, 302, 303, 307, 308)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """The URI does not pass filtering (the reason is for the log, not the user)."""


class FetchFailed(Exception):
    """The URI passed the filter but gave no image data (told in the failure task)."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # as the URI names it: the Host header and the TLS server name
    address: str  # the checked address connected to
    port: int
    path: str


def _listed(allowed: list[Any], disallowed: list[Any], values: list[Any]) -> bool:
    """Glance's rule: an allow list, if any, must hold the value; else no value may be in
    the deny list. `values` are a value and its equivalents (a host and its addresses)."""
    allowed, disallowed = _normal(allowed), _normal(disallowed)
    if allowed:
        equivalents = values[1:]
        return values[0] in allowed or bool(equivalents) and all(v in allowed
                                                                 for v in equivalents)
    return not any(v in disallowed for v in values)


def _normal(values: list[Any]) -> list[Any]:
    """Setting values as URIs are compared: names in lower case, addresses in one form."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, str):
            try:
                value = str(ipaddress.ip_address(value.strip("[]")))
            except ValueError:
                value = value.lower()
        out.append(value)
    return out


def _host(hostname: str | None) -> str:
    """The host normalised as Glance's normalize_hostname does, else Refused."""
    if not hostname:
        raise Refused("no host")
    try:
        return str(ipaddress.ip_address(hostname))
    except ValueError:
        pass
    if all(c.isdigit() or c == "." for c in hostname):
        raise Refused(f"{hostname} is a number, not an address")
    return hostname.lower()


def _resolve(host: str, port: int) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused(f"{host} does not resolve") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise Refused(f"{host} does not resolve")
    return addresses


def _judged(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address whose class decides: an IPv4 address mapped, NAT64-translated or 6to4
    inside an IPv6 one is judged as that IPv4 address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return ip.ipv4_mapped
        if ip.sixtofour:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def _reachable(address: str, networks: list[str]) -> bool:
    ip = _judged(address.split("%")[0])
    if ip.is_global and not ip.is_multicast:
        return True
    raw = ipaddress.ip_address(address.split("%")[0])
    return any(candidate in ipaddress.ip_network(net, strict=False)
               for net in networks for candidate in (ip, raw))


def allowed(uri: Any, settings: Any) -> Target:
    """The target of a URI that passes filtering, else Refused."""
    if not isinstance(uri, str) or not uri:
        raise Refused("no URI")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not _listed(settings.web_download_allowed_schemes,
                                                  settings.web_download_disallowed_schemes,
                                                  [scheme]):
        raise Refused(f"scheme {scheme!r}")
    if parts.username is not None or parts.password is not None:
        raise Refused("credentials in the URI")
    host = _host(parts.hostname)
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        raise Refused("not a port") from None
    if not _listed(settings.web_download_allowed_ports, settings.web_download_disallowed_ports,
                   [port]):
        raise Refused(f"port {port}")
    addresses = _resolve(host, port)
    if not _listed(settings.web_download_allowed_hosts, settings.web_download_disallowed_hosts,
                   [host, *(a for a in addresses if a != host)]):
        raise Refused(f"host {host}")
    for address in addresses:
        if not _reachable(address, settings.web_download_allowed_networks):
            raise Refused(f"{host} resolves to {address}, outside the allowed networks")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(uri, scheme, parts.hostname or host, addresses[0], port, path)


def check_uri(uri: Any, settings: Any) -> Target:
    """The target of an allowed URI, else Glance's 400."""
    if not isinstance(uri, str) or not uri:
        raise BadRequest("Invalid request body: 'uri' is a required property for "
                         "web-download")
    try:
        return allowed(uri, settings)
    except Refused:
        raise BadRequest(f"URI for web-download does not pass filtering: {uri}") from None


class _Deadline:
    """The whole fetch's time: when it is up, the connection in use is shut down, which
    ends whatever read is waiting on it (headers or body, TLS or not)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire) if seconds > 0 else None
        self._end = time.monotonic() + seconds if seconds > 0 else math.inf

    def __enter__(self) -> _Deadline:
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def left(self) -> float:
        return self._end - time.monotonic()

    def watch(self, conn: http.client.HTTPConnection | None) -> None:
        with self._lock:
            self._conn = conn

    def check(self) -> None:
        with self._lock:
            if self.expired or self.left() <= 0:
                self.expired = True
                raise FetchFailed(f"The download did not complete within {self.seconds} s")

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._conn.sock if self._conn is not None else None
            if sock is not None:
                try:  # the plain socket's shutdown, under any TLS layer
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass


def _connection(target: Target, timeout: float) -> http.client.HTTPConnection:
    cls = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    conn = cls(target.host, target.port, timeout=timeout)

    def connect(_address: Any, timeout: Any = None, source: Any = None) -> socket.socket:
        return socket.create_connection((target.address, target.port), timeout, source)

    conn._create_connection = connect  # type: ignore[attr-defined]  # the checked address
    return conn


def fetch(target: Target, dest: Path, size_cap: int, settings: Any) -> None:
    """Stream the body of the 200 answer `target` leads to into `dest` (whole or not at
    all), following allowed redirects, else FetchFailed."""
    read_timeout = float(settings.web_download_read_timeout)
    with _Deadline(float(settings.web_download_timeout)) as deadline:
        for _ in range(MAX_REDIRECTS + 1):
            conn = _connection(target, max(0.01, min(read_timeout, deadline.left())))
            deadline.watch(conn)
            try:
                conn.connect()
                deadline.check()  # expired while connecting: nothing was there to cut
                conn.request("GET", target.path, headers={"User-Agent": "stackling-image-import"})
                resp = conn.getresponse()
                location = resp.getheader("Location")
                if resp.status in _REDIRECTS and location:
                    nxt = urljoin(target.url, location)
                    try:
                        target = allowed(nxt, settings)
                    except Refused:
                        raise FetchFailed(f"Redirect to disallowed URL: {nxt}") from None
                    continue
                if resp.status != 200:
                    raise FetchFailed(f"The URI answered {resp.status} {resp.reason}")
                _body(resp, dest, size_cap, deadline, int(settings.web_download_min_rate),
                      read_timeout)
                return
            except storage.StorageFull:
                raise FetchFailed(StorageMediaFull.message) from None
            except (OSError, http.client.HTTPException) as exc:
                deadline.check()
                raise FetchFailed(f"Fetching the image data failed: {exc}") from None
            finally:
                deadline.watch(None)
                conn.close()
        raise FetchFailed(f"Maximum redirects ({MAX_REDIRECTS}) was exceeded.")


def _body(resp: http.client.HTTPResponse, dest: Path, size_cap: int, deadline: _Deadline,
          min_rate: int, grace: float) -> None:
    start, size = time.monotonic(), 0
    with storage.new_file(dest) as fh:
        while chunk := resp.read1(_CHUNK):
            deadline.check()
            size += len(chunk)
            if size > size_cap:
                raise FetchFailed(f"The image is larger than the image size cap "
                                  f"({size_cap} bytes)")
            fh.write(chunk)
            elapsed = time.monotonic() - start
            if min_rate > 0 and elapsed > grace and size < min_rate * elapsed:
                raise FetchFailed(f"The transfer averaged {size / elapsed:.0f} bytes a second, "
                                  f"below the minimum of {min_rate} bytes a second")
        deadline.check()  # a cut connection reads as the end of the body
        if resp.length:  # the server closed before the length it announced
            raise FetchFailed(f"The downloaded data size {size} is different from the "
                              f"expected {size + resp.length}")
