"""Custom constraints (`custom_constraint: neutron.network`, ...) and the name-or-id
look-ups behind them, which the resource types use too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import netaddr
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.common.schema import is_uuid_like


class NotUnique(Exception):
    pass


def _net() -> Any:
    from stackling.network import interface

    return interface


def _by_name_or_id(kind: str, items_by_id: Callable[[str], Any],
                   items_by_name: Callable[[str], list[Any]], value: str) -> Any:
    # Neutron and Glance ids are UUIDs (their APIs refuse others): a value that is not
    # one can only be a name, so the look-up by id is skipped.
    if is_uuid_like(value):
        try:
            return items_by_id(value)
        except ApiError:
            pass
    matches = items_by_name(value)
    if not matches:
        raise ValueError(f"Unable to find {kind} with name or id '{value}'")
    if len(matches) > 1:
        raise ValueError(f"Multiple {kind} matches found for name '{value}', use an ID to be "
                         f"more specific.")
    return matches[0]


# By id, the look-ups read the visible row's few columns a resource uses (`id`, a subnet's
# `network_id`), not its render; by name, the list (ambiguity is an error).
def _network_by_id(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    net = _net()
    found = net.network_briefs(db, ctx, [value])
    if not found:
        raise net.NetworkNotFound(net_id=value)
    return found[0]


def find_network(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    net = _net()
    return _by_name_or_id("network", lambda v: _network_by_id(db, ctx, v),
                          lambda v: net.network_briefs_named(db, ctx, v), value)


def find_subnet(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    net = _net()
    return _by_name_or_id("subnet", lambda v: net.subnet_brief(db, ctx, v),
                          lambda v: net.list_subnets(db, ctx, name=v), value)


def find_port(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    net = _net()
    return _by_name_or_id("port", lambda v: net.get_port(db, ctx, v),
                          lambda v: net.list_ports(db, ctx, name=v), value)


def find_security_group(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    net = _net()
    return _by_name_or_id("security_group", lambda v: net.security_group_brief(db, ctx, v),
                          lambda v: net.list_security_groups(db, ctx, name=v), value)


def find_flavor(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    from stackling.compute import interface

    try:
        return {"id": interface.flavor_ref(db, ctx, value)}
    except ApiError:
        raise ValueError(f"Flavor {value} could not be found.") from None


def find_image(db: Session, ctx: RequestContext, value: str) -> dict[str, Any]:
    """`{"id"}` of the image `value` names (by id, else by name, as Glance lists it)."""
    from stackling.image import interface as images

    if is_uuid_like(value):
        try:
            return {"id": images.get_image(db, ctx, value).id}
        except ApiError:
            pass
    ids = images.image_ids_named(db, ctx, value, limit=2)
    if not ids:
        raise ValueError(f"No image matching {value}.")
    if len(ids) > 1:
        raise ValueError(f"Multiple images matching {value}.")
    return {"id": ids[0]}


def _volume(db: Session, ctx: RequestContext, value: str) -> None:
    """Heat's cinder.volume: a volume by id (`The Volume (<v>) could not be found.`)."""
    from stackling.block_storage import interface as cinder

    try:
        cinder.get_volume(db, ctx, value)
    except cinder.VolumeNotFound:
        raise ValueError(f"The Volume ({value}) could not be found.") from None


def _snapshot(db: Session, ctx: RequestContext, value: str) -> None:
    from stackling.block_storage import interface as cinder

    try:
        cinder.snapshot_status(db, ctx, value)
    except cinder.SnapshotNotFound:
        raise ValueError(f"The VolumeSnapshot ({value}) could not be found.") from None


def _ip(value: Any) -> None:
    try:
        netaddr.IPAddress(str(value))
    except (netaddr.AddrFormatError, ValueError):
        raise ValueError(f"{value} is not a valid IP address") from None


def _cidr(value: Any) -> None:
    try:
        netaddr.IPNetwork(str(value))
        if "/" not in str(value):
            raise ValueError
    except (netaddr.AddrFormatError, ValueError):
        raise ValueError(f"Invalid net cidr {value} ") from None


def _mac(value: Any) -> None:
    if not netaddr.valid_mac(str(value)):
        raise ValueError(f"{value} is not a valid MAC address") from None


def checker(db: Session, ctx: RequestContext) -> Callable[[str, Any], None]:
    """A custom-constraint checker bound to the caller: ValueError with Heat's
    `Error validating value '<v>': <why>` message."""
    lookups: dict[str, Callable[[Any], Any]] = {
        "neutron.network": lambda v: find_network(db, ctx, v),
        "neutron.subnet": lambda v: find_subnet(db, ctx, v),
        "neutron.port": lambda v: find_port(db, ctx, v),
        "neutron.security_group": lambda v: find_security_group(db, ctx, v),
        "nova.flavor": lambda v: find_flavor(db, ctx, v),
        "glance.image": lambda v: find_image(db, ctx, v),
        "cinder.volume": lambda v: _volume(db, ctx, v),
        "cinder.snapshot": lambda v: _snapshot(db, ctx, v),
        "ip_addr": _ip,
        "net_cidr": _cidr,
        "mac_addr": _mac,
    }

    # A template names the same flavor, image or network many times (a router's gateway
    # and a floating IP both on "public"): each is looked up once per validation.
    found: dict[tuple[str, str], str | None] = {}

    def check(name: str, value: Any) -> None:
        fn = lookups.get(name)
        if fn is None:
            return  # a constraint for a service stackling lacks: not checked, as upstream
        if value in (None, ""):
            return
        key = (name, value) if isinstance(value, str) else None
        if key is not None and key in found:
            error = found[key]
        else:
            try:
                fn(value)
                error = None
            except ValueError as err:
                error = f"Error validating value '{value}': {err}"
            if key is not None:
                found[key] = error
        if error is not None:
            raise ValueError(error)

    return check


CUSTOM_CONSTRAINTS = ("neutron.network", "neutron.subnet", "neutron.port",
                      "neutron.security_group", "nova.flavor", "glance.image", "cinder.volume",
                      "cinder.snapshot", "ip_addr",
                      "net_cidr", "mac_addr")
