"""The desired state, read through the services' interfaces in one read transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import netaddr
from sqlalchemy.orm import Session

from stackling.block_storage import interface as block_storage
from stackling.common.context import admin_context
from stackling.compute import interface as compute
from stackling.image import interface as image
from stackling.network import interface as network

DHCP_OWNER = "network:dhcp"
ROUTER_INTERFACE_OWNERS = ("network:router_interface", "network:ha_router_replicated_interface",
                           "network:router_interface_distributed")
GATEWAY_OWNER = "network:router_gateway"


@dataclass
class Desired:
    networks: dict[str, dict[str, Any]]
    subnets: dict[str, dict[str, Any]]
    ports: dict[str, dict[str, Any]]
    servers: dict[str, dict[str, Any]]
    routers: dict[str, dict[str, Any]]
    floating_ips: list[dict[str, Any]]
    security_groups: dict[str, dict[str, Any]]
    # ports by device id, in creation order (a server's eth0 is its first port)
    by_device: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # the wire (topology.py): every segment by id, and each compute host's physnets
    segments: dict[str, dict[str, Any]] = field(default_factory=dict)
    hosts: dict[str, list[str]] = field(default_factory=dict)
    # snapshot images waiting for their server's disk (image.interface.pending_snapshots)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    # server id -> its volumes' attachments, oldest first (volumes.py): volume_id, path,
    # device (Nova's mountpoint), readonly
    volumes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for port in sorted(self.ports.values(), key=lambda p: (p.get("created_at") or "", p["id"])):
            self.by_device.setdefault(port["device_id"], []).append(port)

    def prefixlen(self, subnet_id: str) -> int:
        return netaddr.IPNetwork(self.subnets[subnet_id]["cidr"]).prefixlen

    def ipv4(self, port: dict[str, Any]) -> list[tuple[str, str]]:
        """(subnet id, address) of the port's IPv4 fixed IPs on subnets we know."""
        return [(ip["subnet_id"], ip["ip_address"]) for ip in port["fixed_ips"]
                if ip["subnet_id"] in self.subnets and ":" not in ip["ip_address"]]

    def dhcp_subnets(self, network_id: str) -> list[dict[str, Any]]:
        net = self.networks[network_id]
        return [self.subnets[s] for s in net.get("subnets", [])
                if s in self.subnets and self.subnets[s]["enable_dhcp"]
                and self.subnets[s]["ip_version"] == 4]

    def dhcp_port(self, network_id: str) -> dict[str, Any] | None:
        return next((p for p in self.ports.values()
                     if p["network_id"] == network_id and p["device_owner"] == DHCP_OWNER), None)


def _image(db: Session, ctx: Any, image_id: str) -> dict[str, Any] | None:
    """What a guest boots from its image: its data file and formats (None: a deleted image,
    whose servers keep the root disk they have)."""
    try:
        found = image.get_image(db, ctx, image_id)
    except Exception:  # noqa: BLE001 - a deleted image
        return None
    path = image.data_path(db, found)
    return {"id": found.id, "data": str(path) if path is not None else None,
            "disk_format": found.disk_format, "container_format": found.container_format,
            "checksum": found.os_hash_value or found.checksum or "",
            "size": found.size, "virtual_size": found.virtual_size,
            "os_admin_user": (found.properties or {}).get("os_admin_user"),
            # seconds its guest is given to power off (Nova's image property)
            "os_shutdown_timeout": (found.properties or {}).get("os_shutdown_timeout")}


def read(db: Session) -> Desired:
    ctx = admin_context()
    # servers before their ports: each statement sees what was committed when it ran (READ
    # COMMITTED), so a server read ACTIVE has its ports' binding, committed before, in the
    # later read (read the other way round, a server turning ACTIVE in between was seen
    # without them and booted with no NIC: no address, metadata or key at its boot)
    # (pending snapshots before their servers: a server gone from the later read is gone)
    snapshots = image.pending_snapshots(db)
    servers = {s["id"]: s for s in compute.dataplane_servers(db)}
    networks = {n["id"]: n for n in network.list_networks(db, ctx)}
    subnets = {s["id"]: s for s in network.list_subnets(db, ctx)}
    ports = {p["id"]: p for p in network.list_ports(db, ctx)}
    images: dict[str, dict[str, Any] | None] = {}
    for server in servers.values():  # the image's os_admin_user is who SSH lets in
        ref = server["image_ref"]
        if ref and ref not in images:
            images[ref] = _image(db, ctx, ref)
        found = images.get(ref) or {}
        server["os_admin_user"] = found.get("os_admin_user")
        server["image"] = found or None
    router_ids = {p["device_id"] for p in ports.values()
                  if p["device_owner"] in (*ROUTER_INTERFACE_OWNERS, GATEWAY_OWNER)}
    routers = {}
    for router_id in sorted(router_ids):
        try:
            routers[router_id] = network.get_resource(db, ctx, "router", router_id)
        except Exception:  # noqa: BLE001 - a port whose router is going away
            continue
    fips = [f for f in network.list_floating_ips(db, ctx) if f.get("port_id")]
    groups = {g["id"]: g for g in network.list_security_groups(db, ctx)}
    out = Desired(networks, subnets, ports, servers, routers, fips, groups)
    out.segments = {s["id"]: s for s in network.segments_all(db)}
    out.hosts = network.hosts_physical_networks(db)
    out.snapshots = snapshots
    out.volumes = _volumes(db, [s["id"] for s in servers.values() if s["state"] != "off"])
    return out


def _volumes(db: Session, server_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each server's connected attachments (`attaching`/`attached`: Nova connected it
    to its host), as the guest's disks."""
    runtime = db.info.get("stackling.runtime")  # (the audit's session: the API's runtime)
    settings = runtime.settings if runtime is not None else db.info.get("stackling.settings")
    if settings is None:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for server_id in server_ids:
        for att in block_storage.attachments_for_instance(db, server_id):
            if att.status in ("attaching", "attached"):
                out.setdefault(server_id, []).append({
                    "volume_id": att.volume_id, "device": att.mountpoint,
                    "readonly": att.attach_mode == "ro",
                    "path": str(block_storage.volume_path(settings, att.volume_id))})
    return out


def ensure_dhcp_port(db: Session, network_id: str, device_id: str, subnet_ids: list[str],
                     project_id: str) -> None:
    """The network's DHCP port, as Neutron's DHCP agent asks for one: its address is the
    DHCP server's and the metadata route's next hop."""
    ctx = admin_context()
    if network.list_ports(db, ctx, network_id=network_id, device_owner=DHCP_OWNER):
        return
    network.create_port(db, ctx, {"network_id": network_id, "device_owner": DHCP_OWNER,
                                  "device_id": device_id, "project_id": project_id,
                                  "fixed_ips": [{"subnet_id": s} for s in subnet_ids]})


def create_segment_dhcp_port(db: Session, network_id: str, device_id: str,
                             subnet_ids: list[str], project_id: str) -> None:
    """A routed network's DHCP port on one more segment (Neutron's DHCP agents, one per
    segment, each ask for their own): addresses on that segment's subnets only."""
    ctx = admin_context()
    if network.list_ports(db, ctx, network_id=network_id, device_id=device_id):
        return
    network.create_port(db, ctx, {"network_id": network_id, "device_owner": DHCP_OWNER,
                                  "device_id": device_id, "project_id": project_id,
                                  "fixed_ips": [{"subnet_id": s} for s in subnet_ids]})
