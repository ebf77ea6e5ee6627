"""Trunk sub-ports in the guest, as `eth<n>.<vid>` interfaces beside their parent's NIC.

Neutron's agents carry a sub-port's frames tagged with its segmentation id on the parent's
wire, and the image makes a VLAN interface per sub-port from network_data.json's `vlan`
links. This machine's kernel has no 802.1Q support (`ip link add ... type vlan` is an
unknown device type), so no interface can tag or untag: each VLAN sub-port is its own veth
from its network's bridge into the guest, named as the VLAN interface would be
(`eth0.<vid>`, with the sub-port's MAC and its network's MTU). network_data.json lists it as
Nova does (a `vlan` link on the parent's link, `vlan_id`, `vlan_mac_address`) and the
guest's boot waits for it and takes its address by DHCP. The frames are the same; only the
tag on the parent's wire is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

VLAN = "vlan"


def subports_of(trunks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """parent port id -> its VLAN sub-ports (`port_id`, `segmentation_id`), by id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for trunk in trunks:
        if not trunk.get("admin_state_up", True):
            continue
        subs = [s for s in trunk.get("sub_ports") or [] if s.get("segmentation_type") == VLAN]
        if subs:
            out[trunk["port_id"]] = sorted(subs, key=lambda s: s["segmentation_id"])
    return out


def with_vlans(body: dict[str, Any], ports: list[dict[str, Any]],
               trunks: list[dict[str, Any]], all_ports: dict[str, dict[str, Any]],
               networks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The server's metadata with a `vlan` link and a DHCP network per sub-port of a trunk
    whose parent is one of its ports (Nova's network_data.json for trunks)."""
    by_parent = subports_of(trunks)
    mine = [p for p in ports if p["id"] in by_parent]
    if not mine:
        return body
    key = "openstack/latest/network_data.json"
    data = json.loads(body[key])
    for parent in mine:
        for sub in by_parent[parent["id"]]:
            port = all_ports.get(sub["port_id"])
            if port is None:
                continue
            link = "tap" + port["id"][:11]
            data["links"].append({
                "id": link, "vif_id": port["id"], "type": VLAN,
                "mtu": networks.get(port["network_id"], {}).get("mtu"),
                "vlan_link": "tap" + parent["id"][:11], "vlan_id": sub["segmentation_id"],
                "vlan_mac_address": port["mac_address"]})
            for j, ip in enumerate(port["fixed_ips"]):
                data["networks"].append({
                    "id": f"{link}-{j}", "link": link, "network_id": port["network_id"],
                    "type": "ipv6_dhcp" if ":" in ip["ip_address"] else "ipv4_dhcp",
                    "ip_address": ip["ip_address"], "routes": [], "services": []})
    return {**body, key: json.dumps(data)}


def plug(handles: Any, d: Any, trunks: list[dict[str, Any]], guest_namespace: Callable[[str], str],
         present: set[str], plug_port: Callable[..., bool], attempt: Callable[..., Any],
         previous: dict[str, set[str]],
         hotplug: Callable[[str], Any] = lambda _server_id: None) -> dict[str, set[str]]:
    """Each running guest's sub-port NICs (plug_port: the reconciler's `_plug`, which makes
    a port's veth on its network's bridge); those no longer wanted are removed. Returns
    guest namespace -> its sub-port NIC names (the guest's pass leaves them alone). Only
    guests with a trunk parent, or with sub-port NICs last time, are looked at. A guest
    given a sub-port NIC it did not have is told (`hotplug`: its nic-watch takes the
    address), as a VLAN added to a running trunk is configured without a reboot."""
    by_parent = subports_of(trunks)
    wanted: dict[str, set[str]] = {}
    for server_id, ports in d.by_device.items():
        server = d.servers.get(server_id)
        ns = guest_namespace(server_id)
        parents = [p for p in ports if p["id"] in by_parent]
        if server is None or server["state"] == "off" or ns not in present or \
                not (parents or previous.get(ns)):
            continue
        gns = handles.get(ns)
        links = gns.links()
        have = {name for name in links if "." in name}
        by_mac = {(info.get("address") or "").lower(): name for name, info in links.items()
                  if "." not in name}
        mine: set[str] = set()
        for parent in parents:
            nic = by_mac.get(parent["mac_address"].lower())
            if nic is None:
                continue
            for sub in by_parent[parent["id"]]:
                port = d.ports.get(sub["port_id"])
                if port is None:
                    continue
                name = f"{nic}.{sub['segmentation_id']}"
                if plug_port(d, port, ns, name):
                    mine.add(name)
        for name in have - mine:
            attempt(f"trunk {ns}/{name}", gns.delete_link, name)
        if mine - have:
            hotplug(server_id)
        if mine:
            wanted[ns] = mine
    return wanted


class SubportFilters:
    """The sub-ports' anti-spoofing and security groups in the network node's namespace,
    where their veths are: `bridge`/`inet <prefix>-trunk` tables (firewall.host_rules: the
    sub-port's MAC, addresses, allowed address pairs and groups), written whole when they
    change (or the namespace is new)."""

    def __init__(self) -> None:
        self._applied: tuple[int, str] | None = None

    def apply(self, prefix: str, namespace: str, trunks: list[dict[str, Any]],
              ports: dict[str, dict[str, Any]], tap: Callable[[str], str],
              groups: dict[str, dict[str, Any]], members: dict[str, dict[str, set[str]]],
              bridges: set[str]) -> None:
        """Every VLAN sub-port's rules (a rule for a veth not made yet matches nothing)."""
        from stackling.dataplane import firewall, nft

        subs = [ports[s["port_id"]] for ss in subports_of(trunks).values() for s in ss
                if s["port_id"] in ports]
        taps = [(tap(port["id"]), {**port, "device_owner": "compute:trunk-subport"})
                for port in subs]
        ruleset = firewall.host_rules(f"{prefix}-trunk", taps, bridges, groups, members)
        key = (os.stat(f"/run/netns/{namespace}").st_ino,
               hashlib.sha256(ruleset.encode()).hexdigest())
        if self._applied != key:
            nft.apply(namespace, ruleset)
            self._applied = key
