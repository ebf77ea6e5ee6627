"""Glance's `web-download` import method, local: the image's data is fetched from a URI.

Glance filters the URI ([import_filtering_opts]); here the allowed hosts and schemes are
settings (`image.web_download_allowed_hosts`, `..._schemes`, loopback names and http by
default) and, whatever they list, the host must resolve to a loopback address: the cloud
fetches nothing from outside the machine. Redirects are not followed (a redirect could
leave the loopback). The body streams to a staging file, capped at `image_size_cap`.

Glance answers 202 and fetches in the background; here the fetch runs in the request, and
a failed fetch is what Glance's would be: a `failure` task and the image still `queued`.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from stackling.common.errors import BadRequest

_CHUNK = 1 << 20
TIMEOUT = 30.0  # seconds without a byte from the server


class FetchFailed(Exception):
    """The URI passed the filter but gave no image data (told in the failure task)."""


def _loopback_address(host: str, port: int) -> str | None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return None
    addresses = [info[4][0] for info in infos]
    if not addresses or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback
                                for a in addresses):
        return None
    return addresses[0]


def check_uri(uri: Any, settings: Any) -> tuple[str, str, int, str]:
    """(scheme, address, port, path) of an allowed URI, else Glance's 400."""
    refused = BadRequest(f"URI for web-download does not pass filtering: {uri}")
    if not isinstance(uri, str) or not uri:
        raise BadRequest("Invalid request body: 'uri' is a required property for "
                         "web-download")
    parts = urlsplit(uri)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise refused from None
    if parts.scheme not in settings.web_download_allowed_schemes or not parts.hostname \
            or parts.hostname not in settings.web_download_allowed_hosts \
            or parts.username or parts.password:
        raise refused
    address = _loopback_address(parts.hostname, port)
    if address is None:
        raise refused
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme, address, port, path


def fetch(target: tuple[str, str, int, str], dest: Path, size_cap: int) -> None:
    """Stream the body of a 200 answer into `dest` (a private file), else FetchFailed."""
    scheme, address, port, path = target
    cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    conn = cls(address, port, timeout=TIMEOUT)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.tmp")
    try:
        conn.request("GET", path, headers={"User-Agent": "stackling-image-import"})
        resp = conn.getresponse()
        if resp.status != 200:
            raise FetchFailed(f"The URI answered {resp.status} {resp.reason}")
        size = 0
        with open(tmp, "wb") as fh:
            while chunk := resp.read(_CHUNK):
                size += len(chunk)
                if size > size_cap:
                    raise FetchFailed(f"The image is larger than the image size cap "
                                      f"({size_cap} bytes)")
                fh.write(chunk)
        tmp.replace(dest)
    except (OSError, http.client.HTTPException) as exc:
        raise FetchFailed(f"Fetching the image data failed: {exc}") from None
    finally:
        conn.close()
        tmp.unlink(missing_ok=True)
