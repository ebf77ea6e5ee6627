"""Names of a cloud's kernel objects: `<prefix>-<role><id prefix>`, at most 15 characters.

The prefix is `sl` and four hex digits of the cloud's database URL, so two clouds on one
machine never touch each other's objects, and every worker of one cloud agrees on it.
"""

from __future__ import annotations

import hashlib

IFNAMSIZ = 15  # Linux link names stop at 15 characters


def cloud_prefix(db_url: str) -> str:
    return "sl" + hashlib.sha256(db_url.encode()).hexdigest()[:4]


# VXLAN carries every tunnel type, each on its own UDP port so that the same id of two
# types never meets (the kernel here has no GRE or Geneve devices)
TUNNEL_LETTER = {"vxlan": "x", "gre": "g", "geneve": "e"}
TUNNEL_PORT = {"vxlan": 4789, "gre": 4790, "geneve": 6081}


def _tag(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def physnet_tag(physnet: str | None) -> str:
    """Four hex digits naming a physical network inside link names."""
    return _tag(physnet or "", 4)


class Names:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def _name(self, role: str, ident: str) -> str:
        name = f"{self.prefix}-{role}{ident.replace('-', '')}"[:IFNAMSIZ]
        return name

    # namespaces (no length limit, but kept short and alike)
    @property
    def fabric(self) -> str:
        """The namespace of every network's bridge (the machines' switches)."""
        return f"{self.prefix}-fabric"

    @property
    def outside(self) -> str:
        """The outside world: the external networks' side, where users stand."""
        return f"{self.prefix}-outside"

    def guest(self, server_id: str) -> str:
        return f"{self.prefix}-g{server_id}"

    def dhcp(self, network_id: str) -> str:
        return f"{self.prefix}-d{network_id}"

    def router(self, router_id: str) -> str:
        return f"{self.prefix}-r{router_id}"

    # links
    def bridge(self, network_type: str, segmentation_id: int | None, network_id: str) -> str:
        """One bridge per segment: VLAN 100 and VXLAN 100 are different bridges."""
        if segmentation_id is None:
            return self._name("n", network_id)
        return self._name("b" + network_type[:1], f"{segmentation_id:06x}")

    def tap(self, port_id: str) -> str:
        """The fabric end of a port's veth (Neutron's tap + id prefix)."""
        return self._name("t", port_id)

    def peer(self, port_id: str) -> str:
        """The other end before it moves into its namespace and takes its role name."""
        return self._name("p", port_id)

    # ------------------------------------------------------------------ the wire (topology.py)
    # namespaces
    def host(self, host: str) -> str:
        """A compute host (its "hypervisor"): its guests' taps and its segments' bridges."""
        return f"{self.prefix}-h{host}"

    def switch(self, physnet: str) -> str:
        """A physical network's switch: one bridge per segment on it (flat, each VLAN)."""
        return f"{self.prefix}-pn-{physnet}"

    @property
    def underlay(self) -> str:
        """The tunnel network: every node's VTEP on one bridge (VXLAN travels here)."""
        return f"{self.prefix}-underlay"

    def switching_only(self, namespace: str) -> bool:
        """A namespace of bridges and cables only (the fabric, hosts, physnet switches, the
        underlay): nothing there speaks IPv6 itself, so its links are made without it."""
        rest = namespace[len(self.prefix) + 1:] if namespace.startswith(self.prefix + "-") \
            else ""
        return rest in ("fabric", "underlay") or rest.startswith(("h", "pn-"))

    def tor(self, physnet: str) -> str:
        """A rack's top-of-rack router: the gateways of the routed segments on its physnet."""
        return f"{self.prefix}-tor-{physnet}"

    # links
    def segment_bridge(self, seg: dict) -> str:
        """A segment's bridge in a node (host or network node) and in its physnet's
        switch: VLAN 200 of physnet1, VLAN 200 of physnet2 and VXLAN 200 never share one."""
        kind, sid = seg["network_type"], seg.get("segmentation_id")
        if kind == "vlan" and sid is not None:
            return self._name("v", f"{physnet_tag(seg['physical_network'])}{sid:03x}")
        if kind == "flat":
            return self._name("f", physnet_tag(seg["physical_network"]))
        if kind in TUNNEL_LETTER and sid is not None:
            return self._name("b" + TUNNEL_LETTER[kind], f"{sid:06x}")
        return self._name("n", seg["network_id"])

    def channel(self, seg: dict) -> str:
        """A node's link into its physnet's switch for one segment (the node's end): the
        physnet's untagged uplink for flat, one per VLAN id (see README: no 802.1Q here)."""
        tag = physnet_tag(seg["physical_network"])
        if seg["network_type"] == "vlan":
            return self._name("u", f"{tag}{seg['segmentation_id']:03x}")
        return self._name("u", tag)

    def switch_port(self, node: str, seg: dict) -> str:
        """The switch's end of a node's channel."""
        return self._name("k", _tag(f"{node}|{self.channel(seg)}", 7))

    def vxlan(self, seg: dict) -> str:
        return self._name("x" + TUNNEL_LETTER[seg["network_type"]], f"{seg['segmentation_id']:06x}")

    @property
    def vtep(self) -> str:
        """A node's end of its underlay link (it holds the node's tunnel address)."""
        return f"{self.prefix}-vtep"

    def underlay_port(self, node: str) -> str:
        return self._name("w", _tag(node, 7))

    @property
    def underlay_bridge(self) -> str:
        return f"{self.prefix}-ul"

    @property
    def spine(self) -> str:
        """The bridge in the outside namespace (the provider's edge) that joins the ToRs."""
        return f"{self.prefix}-spine"

    def spine_port(self, physnet: str) -> str:
        return self._name("s", physnet_tag(physnet))

    @property
    def tor_uplink(self) -> str:
        """A ToR's link to the spine."""
        return f"{self.prefix}-edge"

    def owns(self, name: str) -> bool:
        return name.startswith(self.prefix + "-")
