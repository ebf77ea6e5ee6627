"""Nova's network proxy APIs and a server's security groups.

`/servers/{id}/os-security-groups` and the addSecurityGroup/removeSecurityGroup actions
are served at every microversion; os-security-groups, os-security-group-rules,
os-floating-ips, os-floating-ip-pools, os-networks and os-tenant-networks only below 2.36
(Nova answers 404 from 2.36 on). Bodies are Nova's formats over the network service.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from stackling.common.errors import BadRequest, NotFound
from stackling.common.http import ApiRequest
from stackling.compute import network_proxy
from stackling.compute.api.common import authorize, version
from stackling.compute.api.server_views import target as _target
from stackling.compute.models import Instance

READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"
POLICIES = {
    "os_compute_api:os-security-groups:list": READER,
    "os_compute_api:os-security-groups:add": MEMBER,
    "os_compute_api:os-security-groups:remove": MEMBER,
    "os_compute_api:os-security-groups:get": READER,
    "os_compute_api:os-security-groups:show": READER,
    "os_compute_api:os-security-groups:create": MEMBER,
    "os_compute_api:os-security-groups:delete": MEMBER,
    "os_compute_api:os-security-groups:update": MEMBER,
    "os_compute_api:os-security-groups:rule:create": MEMBER,
    "os_compute_api:os-security-groups:rule:delete": MEMBER,
    "os_compute_api:os-floating-ips:list": READER,
    "os_compute_api:os-floating-ips:show": READER,
    "os_compute_api:os-floating-ips:create": MEMBER,
    "os_compute_api:os-floating-ips:delete": MEMBER,
    "os_compute_api:os-floating-ips:add": MEMBER,
    "os_compute_api:os-floating-ips:remove": MEMBER,
    "os_compute_api:os-floating-ip-pools:list": "@",
    "os_compute_api:os-networks:list": READER,
    "os_compute_api:os-networks:view": READER,
    "os_compute_api:os-tenant-networks:list": READER,
    "os_compute_api:os-tenant-networks:show": READER,
}
PROXY_REMOVED = "2.36"  # "Deprecate all proxy APIs": 404 from here on
FLOATING_ACTIONS_REMOVED = "2.44"  # add/removeFloatingIp (and add/removeFixedIp)


def _until(rq: ApiRequest, removed: str) -> None:
    if version(rq).matches(removed):
        raise NotFound("The resource could not be found.")


def _proxy(rq: ApiRequest, action: str) -> None:
    """A proxy API: Nova's 404 from 2.36 on, then the action's policy."""
    _until(rq, PROXY_REMOVED)
    authorize(rq, action)


def _body(rq: ApiRequest, key: str) -> dict[str, Any]:
    """The request body's `key` object (Nova's 400s for a malformed or missing one)."""
    data = rq.json(malformed="Malformed request body")
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, dict):
        raise BadRequest("The request body can't be empty")
    return value


# ------------------------------------------------------------------ a server's groups
def server_groups(rq: ApiRequest) -> Any:
    from stackling.compute import servers

    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"])
    authorize(rq, "os-security-groups:list", _target(inst))
    return {"security_groups": network_proxy.instance_security_groups(rq.db, rq.ctx, inst)}


def _group_name(body: Any, action: str) -> str:
    """Nova's SecurityGroupActionController._parse."""
    value = body.get(action) if isinstance(body, dict) else None
    if not isinstance(value, dict):
        raise BadRequest("Missing parameter dict")
    if "name" not in value:
        raise BadRequest("Security group not specified")
    name = value["name"]
    if not isinstance(name, str) or not name.strip():
        raise BadRequest("Security group name cannot be empty")
    return name


def add_security_group(rq: ApiRequest, inst: Instance, body: Any) -> Any:
    authorize(rq, "os-security-groups:add", _target(inst))
    network_proxy.add_security_group(rq.db, rq.ctx, inst,
                                     _group_name(body, "addSecurityGroup"))
    return 202, None


def remove_security_group(rq: ApiRequest, inst: Instance, body: Any) -> Any:
    authorize(rq, "os-security-groups:remove", _target(inst))
    network_proxy.remove_security_group(rq.db, rq.ctx, inst,
                                        _group_name(body, "removeSecurityGroup"))
    return 202, None


def _address(body: Any, action: str) -> tuple[str, str | None]:
    value = body.get(action) if isinstance(body, dict) else None
    if not isinstance(value, dict) or "address" not in value:
        raise BadRequest(f"Invalid input for field/attribute {action}. Value: {value}. "
                         "'address' is a required property")
    for key in ("address", "fixed_address"):
        if key in value:
            try:
                ipaddress.ip_address(value[key])
            except (TypeError, ValueError):
                raise BadRequest(f"Invalid input for field/attribute {key}. Value: "
                                 f"{value[key]}. '{value[key]}' is not a 'ip-address'") from None
    return value["address"], value.get("fixed_address")


def add_floating_ip(rq: ApiRequest, inst: Instance, body: Any) -> Any:
    _until(rq, FLOATING_ACTIONS_REMOVED)
    authorize(rq, "os-floating-ips:add", _target(inst))
    address, fixed = _address(body, "addFloatingIp")
    network_proxy.add_floating_ip(rq.db, rq.ctx, inst, address, fixed)
    return 202, None


def remove_floating_ip(rq: ApiRequest, inst: Instance, body: Any) -> Any:
    _until(rq, FLOATING_ACTIONS_REMOVED)
    authorize(rq, "os-floating-ips:remove", _target(inst))
    address, _ = _address(body, "removeFloatingIp")
    network_proxy.remove_floating_ip(rq.db, rq.ctx, inst, address)
    return 202, None


# name -> handler(rq, instance, body), dispatched by servers' action handler
SERVER_ACTIONS = {"addSecurityGroup": add_security_group,
                  "removeSecurityGroup": remove_security_group,
                  "addFloatingIp": add_floating_ip, "removeFloatingIp": remove_floating_ip}


# ------------------------------------------------------------------ os-security-groups
def _sg_id(value: Any) -> str:
    """Nova's validate_id: a security group (or rule) id is a UUID, else a 400."""
    import uuid

    try:
        uuid.UUID(str(value))
    except ValueError:
        raise BadRequest("Security group id should be uuid") from None
    return str(value)


def _sg_property(value: Any, prop: str) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"Security group {prop} is not a string or unicode")
    # Neutron allows an empty description (Nova's neutron driver checks a length of 0..255)
    if not value.strip() and prop != "description":
        raise BadRequest(f"Security group {prop} cannot be empty.")
    if len(value) > 255:
        raise BadRequest(f"Security group {prop} should not be greater than 255 characters.")
    return value


def _sg_values(rq: ApiRequest) -> tuple[str, str]:
    """The name and description of a create or update body."""
    sg = _body(rq, "security_group")
    return _sg_property(sg.get("name"), "name"), _sg_property(sg.get("description"), "description")


def sg_index(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:get")
    all_tenants = rq.query.get("all_tenants") not in (None, "0", "false", "False")
    return {"security_groups": network_proxy.list_groups(rq.db, rq.ctx, all_tenants)}


def sg_show(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:show")
    return {"security_group": network_proxy.show_group(rq.db, rq.ctx,
                                                       _sg_id(rq.path_params["sg_id"]))}


def sg_create(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:create")
    name, description = _sg_values(rq)
    return {"security_group": network_proxy.create_group(rq.db, rq.ctx, name, description)}


def sg_update(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:update")
    _sg_id(rq.path_params["sg_id"])
    name, description = _sg_values(rq)
    return {"security_group": network_proxy.update_group(rq.db, rq.ctx, rq.path_params["sg_id"],
                                                         name, description)}


def sg_delete(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:delete")
    _sg_id(rq.path_params["sg_id"])
    network_proxy.delete_group(rq.db, rq.ctx, rq.path_params["sg_id"])
    return 202, None


def rule_create(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:rule:create")
    rule = _body(rq, "security_group_rule")
    _sg_id(rule.get("parent_group_id"))
    if rule.get("group_id") is not None:
        _sg_id(rule["group_id"])
    return {"security_group_rule": network_proxy.create_rule(rq.db, rq.ctx, rule)}


def rule_delete(rq: ApiRequest) -> Any:
    _proxy(rq, "os-security-groups:rule:delete")
    _sg_id(rq.path_params["rule_id"])
    network_proxy.delete_rule(rq.db, rq.ctx, rq.path_params["rule_id"])
    return 202, None


# ------------------------------------------------------------------ os-floating-ips
def fip_index(rq: ApiRequest) -> Any:
    _proxy(rq, "os-floating-ips:list")
    return {"floating_ips": network_proxy.list_floating_ips(rq.db, rq.ctx)}


def fip_show(rq: ApiRequest) -> Any:
    _proxy(rq, "os-floating-ips:show")
    return {"floating_ip": network_proxy.show_floating_ip(rq.db, rq.ctx,
                                                          rq.path_params["fip_id"])}


def fip_create(rq: ApiRequest) -> Any:
    _proxy(rq, "os-floating-ips:create")
    data = rq.json(malformed="Malformed request body") if rq.raw_body.strip() else None
    pool = data.get("pool") if isinstance(data, dict) else None
    if pool is not None and not isinstance(pool, str):
        raise BadRequest(f"Invalid input for field/attribute pool. Value: {pool}.")
    return {"floating_ip": network_proxy.allocate_floating_ip(rq.db, rq.ctx, pool)}


def fip_delete(rq: ApiRequest) -> Any:
    _proxy(rq, "os-floating-ips:delete")
    network_proxy.release_floating_ip(rq.db, rq.ctx, rq.path_params["fip_id"])
    return 202, None


def fip_pools(rq: ApiRequest) -> Any:
    _proxy(rq, "os-floating-ip-pools:list")
    return {"floating_ip_pools": [{"name": n.get("name") or n["id"]}
                                  for n in network_proxy.pools(rq.db, rq.ctx)]}


# ------------------------------------------------------------------ networks
# os-networks and os-tenant-networks: the same look-ups, each in its own view.
NetworkView = Callable[[ApiRequest, dict[str, Any]], dict[str, Any]]


def _list_networks(rq: ApiRequest, action: str, view: NetworkView) -> Any:
    _proxy(rq, action)
    return {"networks": [view(rq, n) for n in network_proxy.list_networks(rq.db, rq.ctx)]}


def _show_network(rq: ApiRequest, action: str, view: NetworkView) -> Any:
    _proxy(rq, action)
    return {"network": view(rq, network_proxy.get_network(rq.db, rq.ctx,
                                                          rq.path_params["network_id"]))}


def _nova_view(rq: ApiRequest, net: dict[str, Any]) -> dict[str, Any]:
    return network_proxy.network_view(net, rq.ctx.is_admin)


def _tenant_view(rq: ApiRequest, net: dict[str, Any]) -> dict[str, Any]:
    return network_proxy.tenant_network_view(net)


def networks_index(rq: ApiRequest) -> Any:
    return _list_networks(rq, "os-networks:list", _nova_view)


def networks_show(rq: ApiRequest) -> Any:
    return _show_network(rq, "os-networks:view", _nova_view)


def tenant_networks_index(rq: ApiRequest) -> Any:
    return _list_networks(rq, "os-tenant-networks:list", _tenant_view)


def tenant_networks_show(rq: ApiRequest) -> Any:
    return _show_network(rq, "os-tenant-networks:show", _tenant_view)


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers/{server_id}/os-security-groups", get=server_groups)
    s.add("/v2.1/os-security-groups", get=sg_index, post=sg_create)
    s.add("/v2.1/os-security-groups/{sg_id}", get=sg_show, put=sg_update, delete=sg_delete)
    s.add("/v2.1/os-security-group-rules", post=rule_create)
    s.add("/v2.1/os-security-group-rules/{rule_id}", delete=rule_delete)
    s.add("/v2.1/os-floating-ips", get=fip_index, post=fip_create)
    s.add("/v2.1/os-floating-ips/{fip_id}", get=fip_show, delete=fip_delete)
    s.add("/v2.1/os-floating-ip-pools", get=fip_pools)
    s.add("/v2.1/os-networks", get=networks_index)
    s.add("/v2.1/os-networks/{network_id}", get=networks_show)
    s.add("/v2.1/os-tenant-networks", get=tenant_networks_index)
    s.add("/v2.1/os-tenant-networks/{network_id}", get=tenant_networks_show)
