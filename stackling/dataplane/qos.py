"""QoS on the wire, all of it on the host's side of a port's veth where the guest cannot
reach it, as Neutron's Linux bridge agent applies it on the tap:

- `ingress` (towards the server): a `tbf` root qdisc on the host's end of the port's veth,
  which sends into the guest, as upstream's agents shape a tap's egress (pyroute2's tc).
- `egress` (from the server): upstream polices the tap's ingress with a tc filter. This
  machine's kernel has no tc classifiers or police action (`cls_u32`, `cls_matchall`,
  `act_police` cannot be loaded), so the same token bucket is an nftables `limit rate over
  ... drop` on the frames the tap receives, in its host's bridge table (`sends`, written
  by firewall.host_rules): policed as upstream polices it.
- Rates are `max_kbps` (kbit/s); the bucket is `max_burst_kbps`, or 80 % of the rate when
  0 (Neutron's default), never below one full-size frame; latency 50 ms (Neutron's).
- `dscp_marking`: the same bridge table sets the DSCP of every IPv4 and IPv6 packet the
  port sends.
"""

from __future__ import annotations

import logging
from typing import Any

from pyroute2.netlink.exceptions import NetlinkError

from stackling.dataplane.kernel import Ns

LOG = logging.getLogger(__name__)
LATENCY = "50ms"
BURST_DEFAULT = 0.8  # of the rate, when max_burst_kbps is 0 (Neutron's)
TC_HANDLE = 0x10000  # 1:
ENOENT, EINVAL = 2, 22


def limit(rules: list[dict[str, Any]], direction: str) -> tuple[int, int] | None:
    """(rate, burst) in kbit of the port's bandwidth limit in `direction`, if any."""
    for rule in rules:
        if rule["type"] == "bandwidth_limit" and rule.get("direction", "egress") == direction \
                and rule.get("max_kbps"):
            rate = int(rule["max_kbps"])
            burst = int(rule.get("max_burst_kbps") or 0) or int(rate * BURST_DEFAULT)
            return rate, burst
    return None


def dscp(rules: list[dict[str, Any]]) -> int | None:
    return next((int(r["dscp_mark"]) for r in rules
                 if r["type"] == "dscp_marking" and r.get("dscp_mark") is not None), None)


def sends(rules: list[dict[str, Any]], mtu: int = 1500) -> list[str]:
    """The nftables statements for what a port sends, in its host's bridge table (firewall.py,
    out of the guest's reach): its egress limit, policed as upstream's agents police a tap's
    ingress (this kernel has no tc classifiers or police action, nftables' limit is the
    same token bucket), and its DSCP mark."""
    out = []
    wanted = limit(rules, "egress")
    if wanted is not None:
        rate, burst = wanted
        burst_bytes = max(burst * 125, mtu + 14)
        out.append(f"limit rate over {rate * 125} bytes/second burst {burst_bytes} bytes drop")
    mark = dscp(rules)
    if mark is not None:
        out += [f"ether type ip ip dscp set {mark}", f"ether type ip6 ip6 dscp set {mark}"]
    return out


class Limits:
    """The token buckets this process put on links, so a pass touches only what changed."""

    def __init__(self) -> None:
        self._applied: dict[tuple[str, str], tuple[int, tuple[int, int] | None]] = {}

    def ensure(self, handle: Ns, ifname: str, wanted: tuple[int, int] | None,
               mtu: int = 1500) -> None:
        """Exactly this limit (or none) on the link's root."""
        key = (handle.name, ifname)
        idx = handle.index(ifname)
        if idx is None:
            self._applied.pop(key, None)
            return
        if self._applied.get(key) == (idx, wanted):
            return
        if wanted is None:
            try:
                handle.ip.tc("del", index=idx, handle=TC_HANDLE, root=True)
            except NetlinkError as exc:
                if exc.code not in (ENOENT, EINVAL):
                    raise
        else:
            rate, burst = wanted
            burst_bytes = max(burst * 1000 // 8, mtu + 14, rate * 1000 // 8 // 250)
            handle.ip.tc("replace", "tbf", idx, handle=TC_HANDLE, rate=f"{rate}kbit",
                         burst=burst_bytes, latency=LATENCY)
        self._applied[key] = (idx, wanted)

    def forget(self, keep: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """Links (namespace, name) limited before and not in `keep`: to be cleared."""
        return [k for k in self._applied if k not in keep]


def apply(limits: Limits, handles: Any, d: Any, rules_by_port: dict[str, list[dict[str, Any]]],
          tap_namespace: Any, tap_name: Any, present: set[str]) -> None:
    """Every running guest's ingress limits on its host ends (`tap_namespace(port id)` says
    where they are); limits that no longer apply are cleared."""
    keep: set[tuple[str, str]] = set()
    for server_id, ports in d.by_device.items():
        server = d.servers.get(server_id)
        if server is None or server["state"] == "off":
            continue
        for port in ports:
            ingress = limit(rules_by_port.get(port["id"], []), "ingress")
            if ingress is None:
                continue
            mtu = d.networks[port["network_id"]].get("mtu") or 1500
            tns, tap = tap_namespace(port["id"]), tap_name(port["id"])
            if tns in present:
                limits.ensure(handles.get(tns), tap, ingress, mtu)
                keep.add((tns, tap))
    for ns, ifname in limits.forget(keep):
        if ns in present:
            limits.ensure(handles.get(ns), ifname, None)
        limits._applied.pop((ns, ifname), None)
