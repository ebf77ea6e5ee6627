"""The wire's admin API (`/dataplane/v1`, not an OpenStack API): what the kernel holds now,
for the console and operators. Each route is admin only (policy `dataplane:*`); with
`dataplane.driver: none` there is no wire to read (409), and a process that cannot read
the kernel (not root) answers 503.

- `GET /v1`: the driver, whether this process can read the wire, the cloud's prefix.
- `GET /v1/wire`: hosts (the physical networks each reaches, its tunnel address, the
  servers whose taps hang off it), physnet switches, ToRs, namespaces by role.
- `GET /v1/path?source=<server>&destination=<server>[&protocol=icmp|tcp|udp&port=N]`:
  the hops a packet takes and where and why it stops.
"""

from __future__ import annotations

import re
from typing import Any

from stackling.common import errors
from stackling.common.http import ApiRequest, Service

PREFIX = "/dataplane"
SERVER_ID = re.compile(r"^[0-9a-fA-F-]{1,64}$")
PROTOCOLS = ("icmp", "tcp", "udp")
POLICIES = {
    "dataplane:status:show": "role:admin",
    "dataplane:wire:show": "role:admin",
    "dataplane:path:show": "role:admin",
}


def _names(rq: ApiRequest) -> Any:
    from stackling.dataplane.names import Names, cloud_prefix

    return Names(cloud_prefix(rq.settings.db_url))


def _readable(rq: ApiRequest) -> None:
    """A 409 without the netns driver, a 503 when this process cannot read the kernel."""
    from stackling.dataplane.interface import unavailable_reason

    if rq.settings.dataplane.driver != "netns":
        raise errors.Conflict("dataplane.driver is none: this cloud has no wire to read "
                              "(servers are database rows).")
    reason = unavailable_reason()
    if reason is not None:
        raise errors.ServiceUnavailable(f"This process cannot read the wire: {reason}.")


def status(rq: ApiRequest) -> dict[str, Any]:
    from stackling.dataplane.interface import unavailable_reason

    rq.authorize("dataplane:status:show")
    driver = rq.settings.dataplane.driver
    reason = unavailable_reason() if driver == "netns" else "dataplane.driver is none"
    return {"dataplane": {"driver": driver, "readable": reason is None, "reason": reason,
                          "prefix": _names(rq).prefix}}


def wire(rq: ApiRequest) -> dict[str, Any]:
    from stackling.dataplane import live

    rq.authorize("dataplane:wire:show")
    _readable(rq)
    names = _names(rq)
    return {"wire": live.summary(live.read(names), _taps(rq, names))}


def _taps(rq: ApiRequest, names: Any) -> dict[str, str]:
    """A guest's tap name -> its server (the kernel says where the tap is, the ports whose
    it is)."""
    from stackling.common.context import admin_context
    from stackling.network import interface as network

    return {names.tap(p["id"]): p["device_id"] for p in network.list_ports(rq.db, admin_context())
            if (p.get("device_owner") or "").startswith("compute:")}


def _server(rq: ApiRequest, key: str) -> str:
    from stackling.compute import interface as compute

    value = rq.query.get(key)
    if not value:
        raise errors.BadRequest(f"The query parameter {key} (a server id) is required.")
    if not SERVER_ID.match(value) or compute.server_project(rq.db, value) is None:
        raise errors.NotFound(f"Server {value} could not be found.")
    return value


def path(rq: ApiRequest) -> dict[str, Any]:
    from stackling.dataplane import path as path_

    rq.authorize("dataplane:path:show")
    _readable(rq)
    source, destination = _server(rq, "source"), _server(rq, "destination")
    protocol = rq.query.get("protocol") or "icmp"
    if protocol not in PROTOCOLS:
        raise errors.BadRequest(f"protocol must be one of {', '.join(PROTOCOLS)}.")
    port = None
    if rq.query.get("port"):
        try:
            port = int(rq.query["port"])
        except ValueError:
            port = -1
        if not 1 <= port <= 65535 or protocol == "icmp":
            raise errors.BadRequest("port is a number from 1 to 65535, for tcp or udp.")
    elif protocol != "icmp":
        raise errors.BadRequest(f"A {protocol} path needs a port.")
    found = path_.trace(_names(rq), source, destination, protocol, port)
    return {"path": {"source": source, "destination": destination, "protocol": protocol,
                     "port": port, **found}}


def build(runtime: Any) -> Service:
    s = Service("dataplane", PREFIX, "identity")
    s.add("/v1", get=status)
    s.add("/v1/wire", get=wire)
    s.add("/v1/path", get=path)
    return s
