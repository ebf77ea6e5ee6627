"""The ML2-style configuration, parsed once per runtime into plain data.

`settings.network.ml2` holds neutron's option strings (`physnet1:100:199`, `1:16777215`);
`get_config(db)` gives the parsed form to any logic function holding a session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from stackling.config import NetworkSettings
from stackling.network.policy import runtime_of

TUNNEL_TYPES = ("vxlan", "gre", "geneve")
# Largest id per type (inclusive); VLAN ids are 1..4094.
MAX_ID = {"vlan": 4094, "vxlan": 2**24 - 1, "geneve": 2**24 - 1, "gre": 2**32 - 1}


@dataclass(frozen=True)
class NetConfig:
    type_drivers: tuple[str, ...]
    tenant_network_types: tuple[str, ...]
    flat_networks: tuple[str, ...]  # may contain "*"
    vlan_physnets: tuple[str, ...]  # every physnet named in network_vlan_ranges, in order
    vlan_ranges: dict[str, list[tuple[int, int]]]  # physnet -> ranges (may be empty)
    tunnel_ranges: dict[str, list[tuple[int, int]]]  # vxlan/gre/geneve -> ranges
    physnet_mtus: dict[str, int]
    global_physnet_mtu: int
    path_mtu: int
    base_mac: str
    pagination_max_limit: int
    settings: NetworkSettings = field(repr=False, compare=False, hash=False)


def _range(text: str, what: str) -> tuple[int, int]:
    lo, hi = (int(x) for x in text.split(":"))
    if lo > hi:
        raise ValueError(f"{what}: minimum {lo} above maximum {hi}")
    return lo, hi


def parse(settings: NetworkSettings) -> NetConfig:
    ml2 = settings.ml2
    vlan: dict[str, list[tuple[int, int]]] = {}
    for entry in ml2.network_vlan_ranges:
        physnet, _, rest = entry.partition(":")
        ranges = vlan.setdefault(physnet.strip(), [])
        if rest:
            ranges.append(_range(rest, f"network_vlan_ranges {entry}"))
    tunnels = {
        "vxlan": [_range(r, "vni_ranges") for r in ml2.vni_ranges],
        "gre": [_range(r, "tunnel_id_ranges") for r in ml2.tunnel_id_ranges],
        "geneve": [_range(r, "geneve_vni_ranges") for r in ml2.geneve_vni_ranges],
    }
    mtus = {}
    for entry in ml2.physical_network_mtus:
        physnet, _, mtu = entry.partition(":")
        mtus[physnet.strip()] = int(mtu)
    return NetConfig(
        type_drivers=tuple(ml2.type_drivers),
        tenant_network_types=tuple(ml2.tenant_network_types),
        flat_networks=tuple(p.strip() for p in ml2.flat_networks),
        vlan_physnets=tuple(vlan),
        vlan_ranges=vlan,
        tunnel_ranges=tunnels,
        physnet_mtus=mtus,
        global_physnet_mtu=ml2.global_physnet_mtu,
        path_mtu=ml2.path_mtu,
        base_mac=settings.base_mac,
        pagination_max_limit=settings.pagination_max_limit,
        settings=settings,
    )


_DEFAULT: NetConfig | None = None


def get_config(db: Session) -> NetConfig:
    runtime = runtime_of(db)
    if runtime is not None:
        cfg = runtime.state.get("network.config")
        if cfg is None:
            cfg = runtime.state["network.config"] = parse(runtime.settings.network)
        return cfg
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = parse(NetworkSettings())
    return _DEFAULT
