"""Nova's side of networking (nova/network/neutron.py): validate the requested networks
in the API, allocate ports at build, release them at delete, attach and detach interfaces.

Calls go to the network service in process (`stackling.network.interface`), with the
user's context where Nova uses the user's token (visibility) and an elevated one where
Nova uses its admin client (port binding).

A requested network is a dict {network_id, port_id, address, tag}; the whole request is
the string "auto" or "none" (2.37+), or a list, or None (no `networks` before 2.37).
"""

from __future__ import annotations

import ipaddress
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.compute import actions, errors, hosts

AUTO, NONE = "auto", "none"


def _net() -> Any:
    from stackling.network import interface

    return interface


def instance_context(instance: Any) -> RequestContext:
    """The booting user's context, rebuilt for the build worker."""
    return RequestContext(user_id=instance.user_id, project_id=instance.project_id,
                          roles=tuple(instance.roles or ("member", "reader")))


def _is(err: ApiError, *names: str) -> bool:
    return type(err).__name__ in names or err.type_name in names


# ------------------------------------------------------------------ network lookup
def get_available_networks(db: Session, ctx: RequestContext, project_id: str,
                           net_ids: list[str] | None = None,
                           auto_allocate: bool = False) -> list[dict[str, Any]]:
    """Explicit ids (as visible to the caller), or the project's own non-shared networks
    plus the shared ones; external networks are never picked implicitly."""
    net = _net()
    if net_ids:
        # What callers read of explicit ids (id, name, project_id, router:external,
        # subnets), as list_networks(id=...) would give them, in one query.
        return net.network_briefs(db, ctx, list(dict.fromkeys(net_ids)))
    state: dict[str, Any] = {"admin_state_up": True} if auto_allocate else {}
    if ctx.is_admin:
        # An admin sees every network: ask for exactly the two sets Nova asks for.
        nets = (net.list_networks(db, ctx, project_id=project_id, shared=False, **state)
                + net.list_networks(db, ctx, shared=True, **state))
    else:
        # A member sees its own, the shared and the external networks: one query.
        nets = [n for n in net.list_networks(db, ctx, **state)
                if n.get("shared") or n.get("project_id") == project_id]
    return [n for n in nets if not n.get("router:external")]


def _auto_allocate_dry_run(db: Session, ctx: RequestContext, project_id: str) -> None:
    try:
        _net().get_auto_allocated_topology(db, ctx, project_id, dry_run=True)
    except ApiError as err:
        if err.status == 409 or err.status == 404:
            raise errors.UnableToAutoAllocateNetwork(project_id=project_id) from None
        raise


# ------------------------------------------------------------------ API-time validation
def validate_networks(db: Session, ctx: RequestContext, requested: Any,
                      num_instances: int, *, resource_requests_ok: bool = True) -> None:
    """The checks Nova makes before answering 202 (see the digest's table 3.3);
    `resource_requests_ok` False (below 2.72) refuses ports with a resource request."""
    if requested == NONE:
        return
    net = _net()
    if requested is None or requested == AUTO:
        nets = get_available_networks(db, ctx, ctx.project_id or "",
                                      auto_allocate=requested == AUTO)
        if len(nets) > 1:
            raise errors.NetworkAmbiguous()
        if not nets and requested == AUTO:
            _auto_allocate_dry_run(db, ctx, ctx.project_id or "")
        return
    net_ids: list[str] = []
    for req in requested:
        if req.get("port_id"):
            try:
                port = net.port_brief(db, ctx, req["port_id"])
            except ApiError as err:
                if _is(err, "PortNotFound") or err.status == 404:
                    raise errors.PortNotFound(port_id=req["port_id"]) from None
                raise
            if port.get("device_id"):
                raise errors.PortInUse(port_id=req["port_id"])
            if port.get("ip_allocation") not in ("deferred", "none") and not port.get("fixed_ips"):
                raise errors.PortRequiresFixedIP(port_id=req["port_id"])
            if not resource_requests_ok and net.port_resource_request(db, req["port_id"]):
                raise errors.CreateWithPortResourceRequestOldVersion()
            req["network_id"] = port["network_id"]
            continue
        net_ids.append(req["network_id"])
        if req.get("address"):
            used = net.list_ports(db, ctx.elevated(), network_id=req["network_id"],
                                  fixed_ips=[f"ip_address={req['address']}"])
            if used:
                raise errors.FixedIpAlreadyInUse(address=req["address"],
                                                 instance_uuid=used[0].get("device_id", ""))
    if net_ids:
        nets = get_available_networks(db, ctx, ctx.project_id or "", net_ids)
        for n in nets:
            if not n.get("subnets"):
                raise errors.NetworkRequiresSubnet(network_uuid=n["id"])
        missing = [i for i in dict.fromkeys(net_ids) if i not in {n["id"] for n in nets}]
        if missing:
            raise errors.NetworkNotFound(network_id=", ".join(missing))


def resolve_security_groups(db: Session, ctx: RequestContext, names: list[str]) -> list[str]:
    """Names or ids to ids (the project's groups); unknown ones are Nova's 400."""
    if not names or names == ["default"]:
        return []
    groups = _net().list_security_groups(db, ctx, project_id=ctx.project_id)
    ids = []
    for name in names:
        match = [g["id"] for g in groups if name in (g["id"], g["name"])]
        if not match:
            raise errors.ValidationError(
                detail=f"Security group {name} not found for project {ctx.project_id}.")
        if len(match) > 1:
            raise errors.NoUniqueMatch(
                detail=f"Multiple security_group matches found for name '{name}', use an "
                       "ID to be more specific.")
        ids.append(match[0])
    return ids


# ------------------------------------------------------------------ build-time allocation
def _vif(port: dict[str, Any], label: str, preexisting: bool,
         tag: str | None = None) -> dict[str, Any]:
    ips = [{"address": ip["ip_address"], "subnet_id": ip.get("subnet_id"),
            "version": ipaddress.ip_address(ip["ip_address"]).version}
           for ip in port.get("fixed_ips") or []]
    return {"port_id": port["id"], "network_id": port["network_id"], "label": label,
            "mac": port.get("mac_address"), "ips": ips, "preexisting": preexisting,
            "tag": tag, "port_state": port.get("status")}


class PortBindingFailed(ApiError):
    status = 500
    message = ("Binding failed for port %(port_id)s, please check neutron logs for more "
               "information.")


def _check_bound(port: dict[str, Any], host: str) -> dict[str, Any]:
    if port.get("binding:vif_type") == "binding_failed":
        raise PortBindingFailed(port_id=port["id"], host=host)
    return port


def _binding(instance: Any, host: str, az: str) -> dict[str, Any]:
    """A port's fields for its server; with dns-integration, as Nova sets it, the port's
    `dns_name` is the server's hostname (so the network's DHCP/DNS answers the name)."""
    out = {"device_id": instance.uuid, "device_owner": f"compute:{az}",
           "binding:host_id": host}
    if getattr(instance, "hostname", None):
        out["dns_name"] = instance.hostname
    return out


class BuildLookups:
    """What one build attempt reads of its requested ports and networks, as the booting
    user sees them: read once for the scheduler's routed needs, used again by the
    allocation (nothing between the two writes a port or a network)."""

    def __init__(self) -> None:
        self.ports: dict[str, dict[str, Any]] = {}  # port id -> port_brief
        self.nets: dict[Any, list[dict[str, Any]]] = {}  # get_available_networks' args
        self.routed: list[RoutedNeed] | None = None  # None: not computed

    def port(self, db: Session, ctx: RequestContext, port_id: str) -> dict[str, Any]:
        port = self.ports.get(port_id)
        if port is None:
            port = self.ports[port_id] = _net().port_brief(db, ctx, port_id)
        return port

    def networks(self, db: Session, ctx: RequestContext, project_id: str,
                 net_ids: list[str] | None = None,
                 auto_allocate: bool = False) -> list[dict[str, Any]]:
        key = (project_id, tuple(net_ids or ()), auto_allocate)
        nets = self.nets.get(key)
        if nets is None:
            nets = self.nets[key] = get_available_networks(db, ctx, project_id, net_ids,
                                                           auto_allocate)
        return nets


def allocate_for_instance(db: Session, instance: Any, host: str, az: str,
                          lookups: BuildLookups | None = None) -> list[dict[str, Any]]:
    """Create or bind the instance's ports on `host`; returns the network info cache.
    `lookups`: what this build attempt read already (`routed_needs_for_build`).

    Raises Nova's errors (PortInUse, NetworkAmbiguous, UnableToAutoAllocateNetwork...)
    or the network service's; the caller turns any of them into a failed build.
    """
    requested = instance.requested_networks
    if requested == NONE:
        return []
    net = _net()
    ctx = instance_context(instance)
    admin = ctx.elevated()
    lookups = lookups or BuildLookups()
    requests = [] if requested in (None, AUTO) else [dict(r) for r in requested]
    ports: dict[str, dict[str, Any]] = {}
    for req in requests:
        if req.get("port_id"):
            port = lookups.port(db, ctx, req["port_id"])
            if port.get("project_id") != instance.project_id and not ctx.is_admin:
                raise errors.PortNotUsable(port_id=req["port_id"], instance=instance.uuid)
            if port.get("device_id"):
                raise errors.PortInUse(port_id=req["port_id"])
            if port.get("dns_name") and instance.hostname and \
                    port["dns_name"] != instance.hostname:
                raise errors.PortNotUsableDNS(port_id=req["port_id"], instance=instance.uuid,
                                              value=port["dns_name"],
                                              hostname=instance.hostname)
            ports[req["port_id"]] = port
            req["network_id"] = port["network_id"]
    net_ids = [r["network_id"] for r in requests if r.get("network_id")]
    nets = lookups.networks(db, ctx, instance.project_id, net_ids,
                            auto_allocate=requested == AUTO)
    if not nets and requested == AUTO:
        try:
            topology = net.get_auto_allocated_topology(db, ctx, instance.project_id)
            nets = [net.get_network(db, ctx, topology["id"])]
        except ApiError:
            raise errors.UnableToAutoAllocateNetwork(project_id=instance.project_id) from None
    by_id = {n["id"]: n for n in nets}
    if requested in (None, AUTO):
        if not nets:
            return []  # nothing requested, nothing visible: a server without NICs
        if len(nets) > 1:
            raise errors.NetworkAmbiguous()
        requests = [{"network_id": nets[0]["id"]}]
    missing = [i for i in dict.fromkeys(net_ids) if i not in by_id]
    if missing:
        raise errors.NetworkNotFound(network_id=", ".join(missing))
    sg_ids = resolve_security_groups(db, ctx, list(instance.security_groups or []))
    if lookups.routed is None or any(n.ipv4 for n in lookups.routed):
        # the ports' own allocations take over (a build whose needs took no IPv4
        # address claimed none: nothing to drop)
        drop_ipv4_claim(db, instance)
    info = []
    for req in requests:
        label = by_id[req["network_id"]].get("name") or req["network_id"]
        if req.get("port_id"):
            port = net.update_port_brief(db, admin, req["port_id"],
                                         _binding(instance, host, az))
            info.append(_vif(_check_bound(port, host), label, True, req.get("tag")))
            continue
        body: dict[str, Any] = {"network_id": req["network_id"], "admin_state_up": True,
                                "project_id": instance.project_id,
                                **_binding(instance, host, az)}
        if req.get("address"):
            body["fixed_ips"] = [{"ip_address": req["address"]}]
        if sg_ids:
            body["security_groups"] = sg_ids
        port = net.create_port(db, admin, body)
        info.append(_vif(_check_bound(port, host), label, False, req.get("tag")))
    if any(vif.get("preexisting") for vif in info):  # as Nova: the groups of its ports
        instance.security_groups = net.port_security_group_names(
            db, [vif["port_id"] for vif in info])
    return info


def deallocate_for_instance(db: Session, instance: Any) -> None:
    """Delete the ports compute created; unbind the ones the user brought."""
    if instance.requested_networks == NONE:
        return
    for vif in instance.network_info or []:
        release_port(db, vif)


def release_port(db: Session, vif: dict[str, Any]) -> None:
    net = _net()
    admin = RequestContext(roles=("admin", "service"), is_service=True)
    try:
        if vif.get("preexisting"):
            net.update_port(db, admin, vif["port_id"], {"device_id": "", "device_owner": "",
                                                        "binding:host_id": "", "dns_name": ""})
        else:
            net.delete_port(db, admin, vif["port_id"])
    except ApiError as err:
        if err.status != 404:
            raise


# ------------------------------------------------------------------ interfaces
def list_ports(db: Session, ctx: RequestContext, instance: Any) -> list[dict[str, Any]]:
    """The server's ports as its owner's project sees them: a port another project made
    with this device_id is not the server's interface (nova lists with the user's view)."""
    return _net().list_ports(db, instance_context(instance), device_id=instance.uuid)


def attach_interface(db: Session, ctx: RequestContext, instance: Any, net_id: str | None,
                     port_id: str | None, address: str | None,
                     tag: str | None = None) -> dict[str, Any]:
    """Synchronously add a NIC; returns the port. Errors are Nova's for os-interface."""
    net = _net()
    user = instance_context(instance) if ctx.is_admin else ctx
    if port_id:
        try:
            port = net.get_port(db, user, port_id)
        except ApiError as err:
            if err.status == 404:
                raise errors.PortNotFoundAttach(port_id=port_id) from None
            raise
        if port.get("device_id"):
            raise errors.PortInUse(port_id=port_id)
        if port.get("dns_name") and instance.hostname and port["dns_name"] != instance.hostname:
            raise errors.PortNotUsableDNS(port_id=port_id, instance=instance.uuid,
                                          value=port["dns_name"], hostname=instance.hostname)
        _check_reachable(db, instance, port)
        requests = [{"port_id": port_id, "network_id": port["network_id"]}]
    else:
        if net_id is None:
            nets = get_available_networks(db, user, instance.project_id)
            if not nets:
                raise errors.InterfaceAttachFailedNoNetwork(project_id=instance.project_id)
            if len(nets) > 1:
                raise errors.NetworkAmbiguousAttach()
            net_id = nets[0]["id"]
        elif not get_available_networks(db, user, instance.project_id, [net_id]):
            raise errors.NetworkNotFoundAttach(network_id=net_id)
        requests = [{"network_id": net_id, "address": address}]
    nets = get_available_networks(db, user, instance.project_id, [requests[0]["network_id"]])
    label = (nets[0].get("name") if nets else None) or requests[0]["network_id"]
    admin = user.elevated()
    binding = _binding(instance, instance.host or "", instance.availability_zone or "nova")
    try:
        if port_id:
            port = net.update_port(db, admin, port_id, binding)
            vif = _vif(port, label, True, tag)
        else:
            body: dict[str, Any] = {"network_id": net_id, "admin_state_up": True,
                                    "project_id": instance.project_id, **binding}
            if address:
                body["fixed_ips"] = [{"ip_address": address}]
            port = net.create_port(db, admin, body)
            vif = _vif(port, label, False, tag)
    except ApiError as err:
        if _is(err, "IpAddressInUse", "IpAddressAlreadyAllocated"):
            raise errors.FixedIpAlreadyInUse(address=address, instance_uuid="") from None
        if _is(err, "IpAddressGenerationFailure"):
            raise errors.NoMoreFixedIps(net=net_id) from None
        raise
    instance.network_info = [*(instance.network_info or []), vif]
    actions.record(db, ctx, instance, "attach_interface")
    return port


def _check_reachable(db: Session, instance: Any, port: dict[str, Any]) -> None:
    """A port whose address sits on a segment is only usable on hosts reaching it."""
    subnets = [ip["subnet_id"] for ip in port.get("fixed_ips") or [] if ip.get("subnet_id")]
    segments = sorted(set(segments_of_subnets(db, subnets).values()))
    if segments and instance.host and not host_reaches(db, instance.host, segments):
        raise errors.SegmentNotReachable(
            what=f"Port {port['id']}", segment=" or ".join(segments),
            network=port["network_id"], host=instance.host)


def detach_interface(db: Session, ctx: RequestContext, instance: Any, port_id: str) -> None:
    vifs = list(instance.network_info or [])
    vif = next((v for v in vifs if v["port_id"] == port_id), None)
    if vif is None:
        raise errors.PortNotFoundForInstance(port_id=port_id, instance=instance.uuid)
    release_port(db, vif)
    instance.network_info = [v for v in vifs if v["port_id"] != port_id]
    actions.record(db, ctx, instance, "detach_interface")


# ------------------------------------------------------------------ routed networks
# What the scheduler needs to know of a server's NICs on routed networks (subnets bound
# to segments): which segments each NIC may use, and how many IPv4 addresses a build
# will take from them. Segment ids are also their placement providers' uuids.
IPV4 = "IPV4_ADDRESS"  # the resource class of a segment's addresses in placement


def _admin() -> RequestContext:
    return RequestContext(roles=("admin", "service"), is_service=True)


def drop_ipv4_claim(db: Session, instance: Any) -> None:
    """Hand the scheduler's IPv4 claim over to the ports, in the build's transaction: the
    network service keeps each compute port's addresses as that port's own placement
    allocation (consumer = the port), written when binding gives it its address. The
    claim made the choice of segment atomic (it locked the segment provider until this
    transaction ends); dropping it just before binding keeps the address counted once."""
    from stackling.placement import interface as placement

    placement.release_resource_class(db, instance.uuid, IPV4)


def host_reaches(db: Session, host: str, segments: list[str]) -> bool:
    """Whether `host` is in the aggregate of one of `segments` (Neutron maps hosts to the
    segments of their physical networks and mirrors that as aggregates)."""
    from stackling.placement import interface as placement

    node = hosts.node_uuid(host)
    aggs = placement.get_aggregates_for_providers(db, [node, *segments])
    mine = set(aggs.get(node, []))
    return any(mine & set(aggs.get(s, [])) for s in segments)


def segments_of_network(db: Session, network_id: str) -> list[str]:
    """The segments of a routed network that have an IPv4 subnet; [] when not routed."""
    if not _net().is_routed_network(db, network_id):
        return []  # one cheap query for every plain network a build names
    subnets = _net().list_subnets(db, _admin(), network_id=network_id,
                                  fields=["segment_id", "ip_version"])
    return sorted({s["segment_id"] for s in subnets
                   if s.get("segment_id") and s.get("ip_version") == 4})


def segments_of_subnets(db: Session, subnet_ids: list[str]) -> dict[str, str]:
    """{subnet_id: segment_id} for the given IPv4 subnets that sit on a segment."""
    if not subnet_ids:
        return {}
    subnets = _net().list_subnets(db, _admin(), id=sorted(set(subnet_ids)),
                                  fields=["id", "segment_id", "ip_version"])
    return {s["id"]: s["segment_id"] for s in subnets
            if s.get("segment_id") and s.get("ip_version") == 4}


def _is_routed(db: Session, brief: dict[str, Any] | None, network_id: str) -> bool:
    if brief is None:
        return bool(_net().is_routed_network(db, network_id))
    return any(s["segment_id"] for s in brief["subnet_details"])


def _segments_of_subnets(db: Session, brief: dict[str, Any] | None,
                         subnet_ids: list[str]) -> dict[str, str]:
    """`segments_of_subnets`, from the network's brief when it holds all these subnets."""
    details = {s["id"]: s for s in brief["subnet_details"]} if brief is not None else {}
    if not all(i in details for i in subnet_ids):
        return segments_of_subnets(db, subnet_ids)
    return {i: details[i]["segment_id"] for i in sorted(set(subnet_ids))
            if details[i]["segment_id"] and details[i]["ip_version"] == 4}


class RoutedNeed(NamedTuple):
    """One NIC on a routed network: the segments it may land on, the IPv4 addresses a
    build takes there (0 for a port that already has its address), what to call it."""

    network_id: str
    segments: tuple[str, ...]
    ipv4: int
    label: str


def routed_needs_for_build(db: Session, instance: Any,
                           lookups: BuildLookups | None = None) -> list[RoutedNeed]:
    """The routed constraints of a server about to be built, from its requested networks,
    without touching any port. What it reads is kept in `lookups` for the allocation."""
    lookups = lookups or BuildLookups()
    lookups.routed = needs = _routed_needs(db, instance, lookups)
    return needs


def _routed_needs(db: Session, instance: Any, lookups: BuildLookups) -> list[RoutedNeed]:
    requested = instance.requested_networks
    if requested == NONE:
        return []
    net = _net()
    ctx = instance_context(instance)
    if requested in (None, AUTO):
        nets = lookups.networks(db, ctx, instance.project_id,
                                auto_allocate=requested == AUTO)
        requests = [{"network_id": nets[0]["id"]}] if len(nets) == 1 else []
        # l2_adjacency is false exactly when a subnet sits on a segment (routed)
        plain: set[str] = {n["id"] for n in nets if n.get("l2_adjacency") is True}
    else:
        requests = [dict(r) for r in requested]
        plain = set()
    ports: dict[str, dict[str, Any]] = {}
    for req in requests:
        if req.get("port_id"):
            try:  # as the booting user sees it: the allocation binds what it reads here
                ports[req["port_id"]] = lookups.port(db, ctx, req["port_id"])
            except ApiError:
                try:
                    ports[req["port_id"]] = net.port_brief(db, _admin(), req["port_id"])
                except ApiError:
                    continue  # the build reports the missing port
    # The requested networks' subnets (and the ports' networks'), one query; a network
    # the user cannot see (the build fails on it) is looked at as before.
    # (In request order, as the allocation asks for them: it finds them read.)
    net_ids = [ports[r["port_id"]]["network_id"] if r.get("port_id") else r["network_id"]
               for r in requests if not r.get("port_id") or r["port_id"] in ports]
    known: dict[str, dict[str, Any]] = {}
    if requested not in (None, AUTO) and net_ids:
        for n in lookups.networks(db, ctx, instance.project_id, net_ids):
            if "subnet_details" in n:
                known[n["id"]] = n
    needs: list[RoutedNeed] = []
    seg_cache: dict[str, list[str]] = {}
    for req in requests:
        if req.get("port_id"):
            port = ports.get(req["port_id"])
            if port is None:
                continue
            subnets = [ip["subnet_id"] for ip in port.get("fixed_ips") or []]
            if subnets:
                # A plain network (one cheap query) has no subnet on a segment.
                segs = sorted(set(_segments_of_subnets(db, known.get(port["network_id"]),
                                                       subnets).values())) if \
                    _is_routed(db, known.get(port["network_id"]), port["network_id"]) else []
                if segs:
                    needs.append(RoutedNeed(port["network_id"], tuple(segs), 0,
                                            f"port {port['id']}"))
                continue
            if port.get("ip_allocation") == "none":
                continue
            network_id = port["network_id"]
            label = f"port {port['id']}"
        else:
            network_id = req["network_id"]
            label = f"network {network_id}"
        if network_id not in seg_cache:
            brief = known.get(network_id)
            if network_id in plain:
                seg_cache[network_id] = []
            elif brief is None:
                seg_cache[network_id] = segments_of_network(db, network_id)
            else:
                seg_cache[network_id] = sorted({s["segment_id"] for s in brief["subnet_details"]
                                                if s["segment_id"] and s["ip_version"] == 4})
        if seg_cache[network_id]:
            needs.append(RoutedNeed(network_id, tuple(seg_cache[network_id]), 1, label))
    return needs


def routed_needs_for_move(db: Session, instance: Any) -> list[RoutedNeed]:
    """A server that holds addresses on segments must stay where those segments reach;
    a port without an address yet (deferred) may go anywhere its network reaches."""
    needs = []
    subnet_ids = [ip["subnet_id"] for vif in instance.network_info or []
                  for ip in vif.get("ips") or [] if ip.get("subnet_id")]
    by_subnet = segments_of_subnets(db, subnet_ids)
    for vif in instance.network_info or []:
        segs = sorted({by_subnet[ip["subnet_id"]] for ip in vif.get("ips") or []
                       if ip.get("subnet_id") in by_subnet})
        if segs:
            needs.append(RoutedNeed(vif["network_id"], tuple(segs), 0,
                                    f"port {vif['port_id']}"))
    return needs


def rebind_ports(db: Session, instance: Any, host: str, az: str) -> list[dict[str, Any]]:
    """Move every port of the server to `host` (a migration's port binding update);
    returns the refreshed network info cache."""
    net = _net()
    admin = _admin()
    info = []
    for vif in instance.network_info or []:
        port = net.update_port(db, admin, vif["port_id"],
                               {"binding:host_id": host, "device_owner": f"compute:{az}"})
        _check_bound(port, host)
        info.append({**vif, **_vif(port, vif["label"], vif.get("preexisting", False),
                                   vif.get("tag"))})
    return info


def unbind_ports(db: Session, instance: Any) -> None:
    """Shelve offload: the ports stay the server's but are bound to no host."""
    net = _net()
    admin = _admin()
    for vif in instance.network_info or []:
        try:
            net.update_port(db, admin, vif["port_id"], {"binding:host_id": ""})
        except ApiError as err:
            if err.status != 404:
                raise
