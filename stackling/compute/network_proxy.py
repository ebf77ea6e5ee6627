"""What Nova still answers about networking on Neutron's behalf.

- floating IPs shown in a server's `addresses` and `/ips` (one query per page of servers),
- a server's security groups and the addSecurityGroup/removeSecurityGroup actions,
- the proxy APIs below their removal microversion: os-tenant-networks, os-networks,
  os-security-groups, os-floating-ips, os-floating-ip-pools.

Everything goes to the network service in process with the caller's context, as Nova
calls Neutron with the user's token, and bodies are rendered in Nova's formats.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError, BadRequest, Conflict, NotFound
from stackling.compute import actions, errors
from stackling.compute.models import Instance


def _net() -> Any:
    from stackling.network import interface

    return interface


# ------------------------------------------------------------------ floating IPs in addresses
def floating_by_port(db: Session, instances: Iterable[Instance]
                     ) -> dict[str, list[tuple[str, str]]]:
    """{port_id: [(fixed_ip, floating_ip)]} for every NIC of these servers, one query."""
    port_ids = [vif["port_id"] for inst in instances for vif in inst.network_info or []]
    return _net().floating_ips_by_port(db, port_ids)


# ------------------------------------------------------------------ security groups
class SecurityGroupNotFound(NotFound):
    message = "%(detail)s"


class SecurityGroupNotFoundForProject(BadRequest):
    message = "%(detail)s"


class SecurityGroupNotExistsForInstance(BadRequest):
    message = "Security group %(security_group_id)s not associated with the instance %(instance_id)s"


def _rule_view(rule: dict[str, Any], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Neutron's rule in Nova's format (nova.network.security_group_api)."""
    protocol = rule.get("protocol")
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if protocol and low is None and high is None:
        low, high = (1, 65535) if str(protocol).upper() in ("TCP", "UDP") else (-1, -1)
    view: dict[str, Any] = {"id": rule["id"], "parent_group_id": rule["security_group_id"],
                            "ip_protocol": protocol, "from_port": low, "to_port": high,
                            "group": {}, "ip_range": {}}
    remote = rule.get("remote_group_id")
    if remote:
        source = groups.get(remote)
        view["group"] = {"name": source["name"] if source else None,
                         "tenant_id": source["project_id"] if source else None}
    elif rule.get("remote_ip_prefix"):
        view["ip_range"] = {"cidr": rule["remote_ip_prefix"]}
    return view


def group_view(sg: dict[str, Any], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Only ingress rules, as Nova shows them."""
    return {"id": sg["id"], "name": sg["name"], "description": sg.get("description", ""),
            "tenant_id": sg["project_id"],
            "rules": [_rule_view(r, groups) for r in sg.get("security_group_rules") or []
                      if r.get("direction") == "ingress"]}


def render_groups(db: Session, ctx: RequestContext, sgs: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    known = {g["id"]: g for g in sgs}
    remote = {r["remote_group_id"] for g in sgs for r in g.get("security_group_rules") or []
              if r.get("remote_group_id") and r["remote_group_id"] not in known}
    if remote:
        known.update({g["id"]: g for g in _net().list_security_groups(
            db, ctx.elevated(), id=sorted(remote))})
    return [group_view(g, known) for g in sgs]


def _ports(db: Session, instance: Instance) -> list[dict[str, Any]]:
    return _net().list_ports(db, RequestContext(roles=("admin", "service"), is_service=True),
                             device_id=instance.uuid)


def instance_security_groups(db: Session, ctx: RequestContext, instance: Instance
                             ) -> list[dict[str, Any]]:
    ids = sorted({sg for p in _ports(db, instance) for sg in p.get("security_groups") or []})
    if not ids:
        return []
    sgs = _net().list_security_groups(db, ctx.elevated(), id=ids)
    return render_groups(db, ctx, sorted(sgs, key=lambda g: g["name"]))


def _find_group(db: Session, ctx: RequestContext, name: str) -> dict[str, Any]:
    """By id or name among the project's groups (neutronclient's find_resourceid_by_name_or_id)."""
    groups = _net().list_security_groups(db, ctx, project_id=ctx.project_id)
    match = [g for g in groups if g["id"] == name] or [g for g in groups if g["name"] == name]
    if not match:
        raise SecurityGroupNotFound(detail=f"Security group {name} is not found for project "
                                           f"{ctx.project_id}")
    if len(match) > 1:
        raise errors.NoUniqueMatch(detail=f"Multiple security_group matches found for name "
                                          f"'{name}', use an ID to be more specific.")
    return match[0]


def _names(db: Session, instance: Instance) -> list[str]:
    ids = sorted({sg for p in _ports(db, instance) for sg in p.get("security_groups") or []})
    admin = RequestContext(roles=("admin", "service"), is_service=True)
    groups = _net().list_security_groups(db, admin, id=ids) if ids else []
    return sorted(g["name"] for g in groups)


def add_security_group(db: Session, ctx: RequestContext, instance: Instance, name: str) -> None:
    group = _find_group(db, ctx, name)
    ports = _ports(db, instance)
    if not ports:
        raise SecurityGroupNotFound(detail=f"instance_id {instance.uuid} could not be found as "
                                           "device id on any ports")
    admin = ctx.elevated()
    for port in ports:
        if not port.get("port_security_enabled", True) or not port.get("fixed_ips"):
            raise BadRequest("Network requires port_security_enabled and subnet associated in "
                             "order to apply security groups.")
        current = list(port.get("security_groups") or [])
        if group["id"] not in current:
            _net().update_port(db, admin, port["id"], {"security_groups": [*current,
                                                                           group["id"]]})
    instance.security_groups = _names(db, instance)
    actions.record(db, ctx, instance, "addSecurityGroup")


def remove_security_group(db: Session, ctx: RequestContext, instance: Instance,
                          name: str) -> None:
    group = _find_group(db, ctx, name)
    found = False
    admin = ctx.elevated()
    for port in _ports(db, instance):
        current = list(port.get("security_groups") or [])
        if group["id"] in current:
            found = True
            _net().update_port(db, admin, port["id"], {
                "security_groups": [g for g in current if g != group["id"]]})
    if not found:
        raise SecurityGroupNotExistsForInstance(security_group_id=group["id"],
                                                instance_id=instance.uuid)
    instance.security_groups = _names(db, instance)
    actions.record(db, ctx, instance, "removeSecurityGroup")


# ------------------------------------------------------------------ os-security-groups proxy
def list_groups(db: Session, ctx: RequestContext, all_tenants: bool) -> list[dict[str, Any]]:
    filters: dict[str, Any] = {} if all_tenants and ctx.is_admin else {
        "project_id": ctx.project_id}
    return render_groups(db, ctx, _net().list_security_groups(db, ctx, **filters))


def _neutron_404(err: ApiError, detail: str) -> ApiError:
    return SecurityGroupNotFound(detail=detail) if err.status == 404 else err


def show_group(db: Session, ctx: RequestContext, sg_id: str) -> dict[str, Any]:
    try:
        sg = _net().get_security_group(db, ctx, sg_id)
    except ApiError as err:
        raise _neutron_404(err, f"Security group {sg_id} not found.") from None
    return render_groups(db, ctx, [sg])[0]


def create_group(db: Session, ctx: RequestContext, name: str, description: str
                 ) -> dict[str, Any]:
    sg = _net().create_security_group(db, ctx, {"name": name, "description": description,
                                                "project_id": ctx.project_id})
    return render_groups(db, ctx, [sg])[0]


def update_group(db: Session, ctx: RequestContext, sg_id: str, name: str, description: str
                 ) -> dict[str, Any]:
    show_group(db, ctx, sg_id)  # Nova's 404 first
    sg = _net().update_resource(db, ctx, "security_group", sg_id,
                                {"name": name, "description": description})
    return render_groups(db, ctx, [sg])[0]


def delete_group(db: Session, ctx: RequestContext, sg_id: str) -> None:
    try:
        _net().delete_security_group(db, ctx, sg_id)
    except ApiError as err:
        if err.status == 409:
            raise BadRequest(f"Security group {sg_id} is in use.") from None
        raise _neutron_404(err, f"Security group {sg_id} not found.") from None


# ------------------------------------------------------------------ networks
class NetworkNotFound(NotFound):
    message = "Network not found"


def _visible_networks(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    return _net().list_networks(db, ctx)


def tenant_network_view(net: dict[str, Any]) -> dict[str, Any]:
    # Nova renders str(None) for the cidr Neutron networks do not have.
    return {"id": net["id"], "cidr": "None", "label": net.get("name") or ""}


NETWORK_FIELDS = ("id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2", "cidr_v6",
                  "gateway_v6", "label", "netmask_v6")
NETWORK_ADMIN_FIELDS = ("created_at", "updated_at", "deleted_at", "deleted", "injected",
                        "bridge", "vlan", "vpn_public_address", "vpn_public_port",
                        "vpn_private_address", "dhcp_start", "project_id", "host",
                        "bridge_interface", "multi_host", "priority", "rxtx_base", "mtu",
                        "dhcp_server", "enable_dhcp", "share_address")


def network_view(net: dict[str, Any], is_admin: bool) -> dict[str, Any]:
    """os-networks over Neutron: the id and the label; every nova-network field null."""
    fields = NETWORK_FIELDS + (NETWORK_ADMIN_FIELDS if is_admin else ())
    view: dict[str, Any] = dict.fromkeys(fields)
    view["id"], view["label"] = net["id"], net.get("name") or ""
    return view


def list_networks(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    return _visible_networks(db, ctx)


def get_network(db: Session, ctx: RequestContext, network_id: str) -> dict[str, Any]:
    try:
        return _net().get_network(db, ctx, network_id)
    except ApiError as err:
        if err.status == 404:
            raise NetworkNotFound() from None
        raise


# ------------------------------------------------------------------ floating IPs proxy
class FloatingIpNotFound(NotFound):
    message = "Floating IP not found for ID %(id)s"


class FloatingIpPoolNotFound(NotFound):
    message = "Floating IP pool not found."


class NoMoreFloatingIps(NotFound):
    message = "No more floating IPs in pool %(pool)s."


def pools(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    return _net().list_networks(db, ctx, **{"router:external": True})


def _fip_views(db: Session, ctx: RequestContext, fips: list[dict[str, Any]]
               ) -> list[dict[str, Any]]:
    names = {n["id"]: n.get("name") or n["id"] for n in pools(db, ctx)}
    return [{"id": f["id"], "ip": f["floating_ip_address"],
             "pool": names.get(f["floating_network_id"], f["floating_network_id"]),
             "fixed_ip": f.get("fixed_ip_address"),
             "instance_id": (f.get("port_details") or {}).get("device_id") or None}
            for f in fips]


def list_floating_ips(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    return _fip_views(db, ctx, _net().list_floating_ips(db, ctx, project_id=ctx.project_id))


def show_floating_ip(db: Session, ctx: RequestContext, fip_id: str) -> dict[str, Any]:
    try:
        fip = _net().get_floating_ip(db, ctx, fip_id)
    except ApiError as err:
        if err.status == 404:
            raise FloatingIpNotFound(id=fip_id) from None
        raise
    return _fip_views(db, ctx, [fip])[0]


def allocate_floating_ip(db: Session, ctx: RequestContext, pool: str | None
                         ) -> dict[str, Any]:
    candidates = pools(db, ctx)
    if pool:
        match = [n for n in candidates if pool in (n["id"], n.get("name"))]
    else:  # Nova's [neutron]default_floating_pool is "nova"; here: the default external
        match = [n for n in candidates if n.get("is_default")] or candidates[:1]
    if not match:
        raise FloatingIpPoolNotFound()
    try:
        fip = _net().create_floating_ip(db, ctx, {"floating_network_id": match[0]["id"],
                                                  "project_id": ctx.project_id})
    except ApiError as err:
        if err.status == 409 or "Exhausted" in type(err).__name__:
            raise NoMoreFloatingIps(pool=pool or match[0].get("name")) from None
        raise
    return _fip_views(db, ctx, [fip])[0]


def release_floating_ip(db: Session, ctx: RequestContext, fip_id: str) -> None:
    try:
        _net().delete_floating_ip(db, ctx, fip_id)
    except ApiError as err:
        if err.status == 404:
            raise FloatingIpNotFound(id=fip_id) from None
        raise


# ------------------------------------------------------------------ os-security-group-rules
def _port_value(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"Invalid {name} port {value}.") from None


def parse_cidr(cidr: Any) -> str:
    """Nova's parse_cidr: none is 0.0.0.0/0; the value is URL-unquoted and must be a
    network with an explicit prefix length (oslo's is_valid_cidr), else a 400."""
    from urllib.parse import unquote

    if not cidr:
        return "0.0.0.0/0"
    text = unquote(cidr) if isinstance(cidr, str) else ""
    try:
        ipaddress.ip_network(text, strict=False)
        valid = "/" in text and text.split("/", 1)[1] != ""
    except ValueError:
        valid = False
    if not valid:
        raise BadRequest(f"{cidr} is not a valid IP network.")
    return text


def rule_body(values: dict[str, Any], parent: dict[str, Any]) -> dict[str, Any]:
    """Nova's rule arguments (ip_protocol, from_port, to_port, cidr | group_id) as a
    Neutron ingress rule (nova.network.security_group_api.new_*_ingress_rule)."""
    protocol = values.get("ip_protocol")
    group_id, cidr = values.get("group_id"), values.get("cidr")
    body: dict[str, Any] = {"security_group_id": parent["id"], "direction": "ingress",
                            "ethertype": "IPv4"}
    if group_id:
        body["remote_group_id"] = group_id
    else:
        cidr = parse_cidr(cidr)
        network = ipaddress.ip_network(cidr, strict=False)
        if network.prefixlen == 0 and str(network.network_address) not in ("0.0.0.0", "::"):
            raise BadRequest(f"Bad prefix for network in cidr {cidr}")
        body["remote_ip_prefix"] = cidr
        body["ethertype"] = f"IPv{network.version}"
    if protocol is None:
        if values.get("from_port") is not None or values.get("to_port") is not None:
            raise BadRequest("Not enough parameters to build a valid rule.")
        return body
    if not isinstance(protocol, str) or protocol.lower() not in ("tcp", "udp", "icmp"):
        raise BadRequest(f"Invalid IP protocol {protocol}.")
    protocol = protocol.lower()
    low = _port_value(values.get("from_port"), "from")
    high = _port_value(values.get("to_port"), "to")
    if protocol == "icmp":
        if not (-1 <= low <= 255 and -1 <= high <= 255):
            raise BadRequest(f"Invalid port range {low}:{high}. Type and Code must be "
                             "integers for ICMP protocol type")
        body.update(protocol="icmp", port_range_min=None if low == -1 else low,
                    port_range_max=None if high == -1 else high)
    else:
        if low > high or not (1 <= low <= 65535 and 1 <= high <= 65535):
            raise BadRequest(f"Invalid port range {low}:{high}. Valid TCP ports should be "
                             "between 1-65535")
        body.update(protocol=protocol, port_range_min=low, port_range_max=high)
    return body


def create_rule(db: Session, ctx: RequestContext, values: dict[str, Any]) -> dict[str, Any]:
    parent = show_group(db, ctx, str(values.get("parent_group_id") or ""))
    if values.get("group_id"):
        show_group(db, ctx, str(values["group_id"]))
    try:
        rule = _net().create_security_group_rule(db, ctx, rule_body(values, parent))
    except ApiError as err:
        if err.status == 409:
            raise BadRequest("This rule already exists in group "
                             f"{parent['id']}") from None
        raise
    known = {parent["id"]: {"name": parent["name"], "project_id": parent["tenant_id"]}}
    if rule.get("remote_group_id") and rule["remote_group_id"] not in known:
        source = show_group(db, ctx, rule["remote_group_id"])
        known[source["id"]] = {"name": source["name"], "project_id": source["tenant_id"]}
    return _rule_view(rule, known)


def delete_rule(db: Session, ctx: RequestContext, rule_id: str) -> None:
    try:
        _net().delete_security_group_rule(db, ctx, rule_id)
    except ApiError as err:
        if err.status == 404:
            raise SecurityGroupNotFound(detail=f"Rule ({rule_id}) not found") from None
        raise


# ------------------------------------------------------------------ add/removeFloatingIp
class FloatingIpNotFoundForAddress(NotFound):
    message = "floating IP not found"


class FloatingIpNotAssociatedHere(Conflict):
    message = "Floating IP %(address)s is not associated with instance %(id)s."


def _fip_by_address(db: Session, ctx: RequestContext, address: str) -> dict[str, Any]:
    found = _net().list_floating_ips(db, ctx, floating_ip_address=address)
    if not found:
        raise FloatingIpNotFoundForAddress()
    return found[0]


def add_floating_ip(db: Session, ctx: RequestContext, instance: Instance, address: str,
                    fixed_address: str | None) -> None:
    """Nova's addFloatingIp: the first fixed IPv4 address (or the one named) of the
    server's NICs gets the floating IP, through Neutron."""
    vifs = list(instance.network_info or [])
    if not vifs:
        raise BadRequest("Instance network is not ready yet")
    fixed = [(v["port_id"], ip["address"], ip["version"]) for v in vifs for ip in v["ips"]]
    if fixed_address is None:
        v4 = [f for f in fixed if f[2] == 4]
        if not fixed:
            raise BadRequest("No fixed IPs associated to instance")
        if not v4:
            raise BadRequest(f"Unable to associate floating IP {address} to any fixed IPs for "
                             f"instance {instance.uuid}. Instance has no fixed IPv4 addresses "
                             "to associate.")
        port_id, fixed_address = v4[0][0], v4[0][1]
    else:
        match = [f for f in fixed if f[1] == fixed_address]
        if not match:
            raise BadRequest(f"Unable to associate floating IP {address} to fixed IP "
                             f"{fixed_address} for instance {instance.uuid}. Error: Fixed IP "
                             f"{fixed_address} not found")
        port_id = match[0][0]
    fip = _fip_by_address(db, ctx, address)
    try:
        _net().update_floating_ip(db, ctx, fip["id"], {"port_id": port_id,
                                                       "fixed_ip_address": fixed_address})
    except ApiError as err:
        if err.status in (400, 404, 409):
            raise BadRequest(f"Unable to associate floating IP {address} to fixed IP "
                             f"{fixed_address} for instance {instance.uuid}. Error: "
                             f"{err.text}") from None
        raise
    actions.record(db, ctx, instance, "addFloatingIp")


def remove_floating_ip(db: Session, ctx: RequestContext, instance: Instance,
                       address: str) -> None:
    fip = _fip_by_address(db, ctx, address)
    ports = {v["port_id"] for v in instance.network_info or []}
    if not fip.get("port_id") or fip["port_id"] not in ports:
        raise FloatingIpNotAssociatedHere(address=address, id=instance.uuid)
    _net().update_floating_ip(db, ctx, fip["id"], {"port_id": None})
    actions.record(db, ctx, instance, "removeFloatingIp")
