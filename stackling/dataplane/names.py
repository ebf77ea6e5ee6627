"""Names of a cloud's kernel objects: `<prefix>-<role><id prefix>`, at most 15 characters.

The prefix is `sl` and four hex digits of the cloud's database URL, so two clouds on one
machine never touch each other's objects, and every worker of one cloud agrees on it.
"""

from __future__ import annotations

import hashlib

IFNAMSIZ = 15  # Linux link names stop at 15 characters


def cloud_prefix(db_url: str) -> str:
    return "sl" + hashlib.sha256(db_url.encode()).hexdigest()[:4]


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

    def owns(self, name: str) -> bool:
        return name.startswith(self.prefix + "-")
