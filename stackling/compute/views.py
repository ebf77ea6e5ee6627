"""Response bodies, per microversion (Nova's view builders)."""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from stackling.common.microversion import Version
from stackling.compute.models import Flavor, Instance

# status from (vm_state, task_state), as nova.api.openstack.common.status_from_state
_STATE_MAP: dict[str, dict[Any, str]] = {
    "active": {"default": "ACTIVE", "rebooting": "REBOOT", "rebooting_hard": "HARD_REBOOT",
               "updating_password": "PASSWORD", "rebuilding": "REBUILD",
               "migrating": "MIGRATING", "resize_prep": "RESIZE", "resize_migrating": "RESIZE",
               "resize_migrated": "RESIZE", "resize_finish": "RESIZE"},
    "building": {"default": "BUILD"},
    "stopped": {"default": "SHUTOFF", "resize_prep": "RESIZE", "rebuilding": "REBUILD"},
    "resized": {"default": "VERIFY_RESIZE", "resize_reverting": "REVERT_RESIZE"},
    "paused": {"default": "PAUSED"}, "suspended": {"default": "SUSPENDED"},
    "rescued": {"default": "RESCUE"}, "error": {"default": "ERROR", "rebuilding": "REBUILD"},
    "deleted": {"default": "DELETED"}, "soft-delete": {"default": "SOFT_DELETED"},
    "shelved": {"default": "SHELVED"}, "shelved_offloaded": {"default": "SHELVED_OFFLOADED"},
}
PROGRESS_STATUSES = ("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING")


def status_of(inst: Instance) -> str:
    states = _STATE_MAP.get(inst.vm_state, {"default": "UNKNOWN"})
    return states.get(inst.task_state, states["default"])


def iso_z(value: Any) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def naive(value: Any) -> str | None:
    """Nova's naive timestamps (OS-SRV-USG, services, aggregates): microseconds, no zone."""
    return value.replace(tzinfo=None).isoformat(timespec="microseconds") if value else None


class Links:
    """Self and bookmark links under the compute endpoint."""

    def __init__(self, service_url: str) -> None:
        self.versioned = f"{service_url}/v2.1"
        self.bookmark = service_url

    def pair(self, collection: str, ident: str) -> list[dict[str, str]]:
        return [{"rel": "self", "href": f"{self.versioned}/{collection}/{ident}"},
                {"rel": "bookmark", "href": f"{self.bookmark}/{collection}/{ident}"}]

    def bookmark_only(self, collection: str, ident: str) -> list[dict[str, str]]:
        return [{"rel": "bookmark", "href": f"{self.bookmark}/{collection}/{ident}"}]


# ------------------------------------------------------------------ flavors
def flavor_brief(links: Links, f: Flavor, version: Version) -> dict[str, Any]:
    view = {"id": f.flavorid, "name": f.name, "links": links.pair("flavors", f.flavorid)}
    if version.matches("2.55"):
        view["description"] = f.description
    return view


def flavor_detail(links: Links, f: Flavor, version: Version,
                  show_extra_specs: bool = False) -> dict[str, Any]:
    view = {"id": f.flavorid, "name": f.name, "ram": f.memory_mb, "disk": f.root_gb,
            "vcpus": f.vcpus, "swap": f.swap or ("" if not version.matches("2.75") else 0),
            "OS-FLV-EXT-DATA:ephemeral": f.ephemeral_gb,
            "OS-FLV-DISABLED:disabled": f.disabled, "os-flavor-access:is_public": f.is_public,
            "rxtx_factor": f.rxtx_factor, "links": links.pair("flavors", f.flavorid)}
    if version.matches("2.55"):
        view["description"] = f.description
    if version.matches("2.61") and show_extra_specs:
        view["extra_specs"] = dict(f.extra_specs or {})
    if version.matches("2.102"):
        del view["OS-FLV-DISABLED:disabled"], view["rxtx_factor"]
    return view


# ------------------------------------------------------------------ servers
def addresses(inst: Instance, extended: bool = True,
              floating: dict[str, list[tuple[str, str]]] | None = None
              ) -> dict[str, list[dict[str, Any]]]:
    """{label: [ip, ...]} from the network info cache; empty while building.

    `floating` ({port_id: [(fixed, floating)]}, from the network service) adds each
    associated floating IP after the fixed IPs of its NIC, as Nova's cache shows them.
    """
    if inst.vm_state == "building":
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for vif in inst.network_info or []:
        items = out.setdefault(vif["label"], [])
        fips = [(4, fip) for _, fip in (floating or {}).get(vif["port_id"], [])]
        for kind, version, addr in [*(("fixed", ip["version"], ip["address"])
                                      for ip in vif["ips"]),
                                    *(("floating", v, a) for v, a in fips)]:
            item: dict[str, Any] = {"version": version, "addr": addr}
            if extended:
                item["OS-EXT-IPS:type"] = kind
                item["OS-EXT-IPS-MAC:mac_addr"] = vif["mac"]
            items.append(item)
    return out


def access_ip(value: str | None) -> str:
    """As Nova stores them (an IPAddress column): IPv6 in compressed form."""
    if not value:
        return ""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return value


def server_brief(links: Links, inst: Instance) -> dict[str, Any]:
    return {"id": inst.uuid, "name": inst.display_name, "links": links.pair("servers", inst.uuid)}


def server_flavor(inst: Instance, links: Links, version: Version,
                  show_extra_specs: bool) -> dict[str, Any]:
    """Before 2.47 a link to the flavor; from 2.47 the flavor as the server was built."""
    f = inst.flavor
    if not version.matches("2.47"):
        return {"id": f["flavorid"], "links": links.bookmark_only("flavors", f["flavorid"])}
    view: dict[str, Any] = {"vcpus": f["vcpus"], "ram": f["memory_mb"], "disk": f["root_gb"],
                            "ephemeral": f["ephemeral_gb"], "swap": f["swap"],
                            "original_name": f["name"]}
    if show_extra_specs:
        view["extra_specs"] = dict(f.get("extra_specs") or {})
    return view


def server_detail(links: Links, inst: Instance, version: Version, *, is_admin: bool,
                  show_extended_attrs: bool, show_host_status: bool,
                  full: bool = True, show_flavor_extra_specs: bool = True,
                  floating: dict[str, list[tuple[str, str]]] | None = None,
                  server_groups: list[str] | None = None,
                  volumes: list[tuple[str, bool]] | None = None) -> dict[str, Any]:
    """The detail/show body; `full=False` is the pre-2.75 update response;
    `server_groups` (2.71) is given for show, update and rebuild only, never lists."""
    status = status_of(inst)
    host_id = (hashlib.sha224((inst.project_id + inst.host).encode()).hexdigest()
               if inst.host else "")
    image: Any = {"id": inst.image_ref, "links": links.bookmark_only("images", inst.image_ref)} \
        if inst.image_ref else ""
    if image and version.matches("2.98"):  # the image's known properties, as at boot
        image["properties"] = dict(inst.image_properties or {})
    server: dict[str, Any] = {
        "id": inst.uuid, "name": inst.display_name, "status": status,
        "tenant_id": inst.project_id, "user_id": inst.user_id,
        "metadata": dict(inst.metadata_ or {}), "hostId": host_id, "image": image,
        "flavor": server_flavor(inst, links, version, show_flavor_extra_specs),
        "created": iso_z(inst.created_at), "updated": iso_z(inst.updated_at or inst.created_at),
        "addresses": addresses(inst, extended=full, floating=floating),
        "accessIPv4": access_ip(inst.access_ip_v4), "accessIPv6": access_ip(inst.access_ip_v6),
        "links": links.pair("servers", inst.uuid), "OS-DCF:diskConfig": inst.disk_config,
    }
    if status in PROGRESS_STATUSES:
        server["progress"] = 0
    if full:
        server["OS-EXT-AZ:availability_zone"] = inst.availability_zone or ""
        server["config_drive"] = inst.config_drive
        server["key_name"] = inst.key_name
        server["OS-SRV-USG:launched_at"] = naive(inst.launched_at)
        server["OS-SRV-USG:terminated_at"] = None
        if show_extended_attrs:
            server["OS-EXT-SRV-ATTR:host"] = inst.host
            server["OS-EXT-SRV-ATTR:instance_name"] = f"instance-{inst.id:08x}"
            server["OS-EXT-SRV-ATTR:hypervisor_hostname"] = inst.node
            if version.matches("2.3"):
                server["OS-EXT-SRV-ATTR:reservation_id"] = inst.reservation_id
                server["OS-EXT-SRV-ATTR:launch_index"] = inst.launch_index
                server["OS-EXT-SRV-ATTR:hostname"] = inst.hostname
                server["OS-EXT-SRV-ATTR:kernel_id"] = ""
                server["OS-EXT-SRV-ATTR:ramdisk_id"] = ""
                server["OS-EXT-SRV-ATTR:root_device_name"] = "/dev/vda" if inst.host else None
                server["OS-EXT-SRV-ATTR:user_data"] = inst.user_data
        server["OS-EXT-STS:task_state"] = inst.task_state
        server["OS-EXT-STS:vm_state"] = inst.vm_state
        server["OS-EXT-STS:power_state"] = inst.power_state
        # (volume id, delete_on_termination) per attached volume, in attachment order
        server["os-extended-volumes:volumes_attached"] = [
            {"id": vid, "delete_on_termination": dot} if version.matches("2.3") else {"id": vid}
            for vid, dot in volumes or []]
        # Nova leaves the key out when the server's ports are in no group at all
        # (removeSecurityGroup down to none); a row without the list shows default.
        groups = ["default"] if inst.security_groups is None else inst.security_groups
        if inst.network_info and groups:
            server["security_groups"] = [{"name": g} for g in groups]
        if version.matches("2.90"):  # every user sees it from 2.90
            server["OS-EXT-SRV-ATTR:hostname"] = inst.hostname
        if version.matches("2.96"):  # the zone the user pinned the server to, if any
            server["pinned_availability_zone"] = \
                (inst.requested_az or "").partition(":")[0] or None
        if version.matches("2.16") and show_host_status:
            server["host_status"] = "UP" if inst.host else ""
    if inst.fault and status in ("ERROR", "DELETED"):
        fault = {"code": inst.fault["code"], "created": inst.fault["created"],
                 "message": inst.fault["message"]}
        if is_admin or inst.fault["code"] != 500:
            fault["details"] = inst.fault.get("details", "")
        server["fault"] = fault
    if version.matches("2.9"):
        server["locked"] = bool(inst.locked)
    if version.matches("2.19"):
        server["description"] = inst.description
    if version.matches("2.26"):
        server["tags"] = list(inst.tags or [])
    if version.matches("2.63"):
        server["trusted_image_certificates"] = list(inst.trusted_certs) \
            if inst.trusted_certs else None
    if version.matches("2.71") and server_groups is not None:
        server["server_groups"] = server_groups
    if version.matches("2.73"):
        server["locked_reason"] = inst.locked_reason
    if version.matches("2.100"):
        server["scheduler_hints"] = dict(inst.scheduler_hints or {})
    return server


def interface_view(port: dict[str, Any], version: Version,
                   tag: str | None = None) -> dict[str, Any]:
    """`tag` (2.70) is the device tag the NIC was requested with (boot or attach)."""
    view = {"port_id": port["id"], "net_id": port["network_id"],
            "mac_addr": port.get("mac_address"), "port_state": port.get("status"),
            "fixed_ips": [{"ip_address": ip["ip_address"], "subnet_id": ip.get("subnet_id")}
                          for ip in port.get("fixed_ips") or []]}
    if version.matches("2.70"):
        view["tag"] = tag
    return view
