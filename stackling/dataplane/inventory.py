"""The cloud's kernel objects as the desired state says they must be, and as they are.

`expected(desired, names)` lists every object a converged reconciler leaves behind (the
same rules as `reconciler.py`, in one place the audit can read); `observed(names, run_dir)`
reads the live kernel (pyroute2 for namespaces and links, `nft` for tables, pid files
and /proc for processes, the DHCP namespaces' sockets for metadata). `compare` says where
they differ: what is missing and what carries the cloud's prefix but nothing wants.
"""

from __future__ import annotations

import importlib
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from stackling.dataplane import desired as desired_
from stackling.dataplane import kernel, volumes
from stackling.dataplane.dhcp import METADATA_IP
from stackling.dataplane.names import Names

GATEWAY_OWNER = desired_.GATEWAY_OWNER
T = TypeVar("T")
# 169.254.169.254:80 as /proc/net/tcp writes it (the address in host byte order)
METADATA_LISTEN = (f"{struct.unpack('=I', socket.inet_aton(METADATA_IP))[0]:08X}", "0050")


@dataclass
class Inventory:
    """Kernel objects by kind; links and tables per namespace of ours."""

    namespaces: set[str] = field(default_factory=set)
    links: dict[str, set[str]] = field(default_factory=dict)  # namespace -> link names
    tables: dict[str, set[str]] = field(default_factory=dict)  # namespace -> "family name"
    guests: set[str] = field(default_factory=set)  # server ids with a running guest
    dnsmasq: set[str] = field(default_factory=set)  # network ids
    radvd: set[str] = field(default_factory=set)  # router ids advertising IPv6 (ipv6.py)
    metadata: set[str] = field(default_factory=set)  # network ids with a listening socket
    host_links: set[str] = field(default_factory=set)  # prefixed links in the machine's namespace
    strays: set[str] = field(default_factory=set)  # "pid: cmdline" of processes under run_dir
    # volumes on the wire (volumes.py), each "<server id>/<vdX> <volume id>": the loop
    # devices attached for them, and the device nodes in the running guests' /dev
    loops: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)

    def link(self, namespace: str, *names: str) -> None:
        self.links.setdefault(namespace, set()).update(names)


def _feature(name: str) -> Any:
    """A dataplane module of a feature (the wire's topology, IPv6, QoS) when this tree has
    it: the inventory follows whatever the reconciler applies."""
    try:
        return importlib.import_module(f"stackling.dataplane.{name}")
    except ImportError:
        return None


def _bridge(names: Names, net: dict) -> str:
    kind = net.get("provider:network_type") or "local"
    if kind == "flat":
        return names.bridge("flat", None, net["id"])
    return names.bridge(kind, net.get("provider:segmentation_id"), net["id"])


def expected(d: desired_.Desired, names: Names, trunks: list[dict] | None = None) -> Inventory:
    """What a converged pass of the reconciler leaves in the kernel for `d` (and `trunks`,
    whose VLAN sub-ports are NICs of their parent's guest): the same rules as
    `reconciler.py` (and `topology.plan` for the wire: hosts, physnet switches, underlay,
    ToRs)."""
    inv = Inventory()
    table = names.prefix
    fabric, outside = names.fabric, names.outside
    topology, ipv6 = _feature("topology"), _feature("ipv6")
    inv.namespaces |= {fabric, outside}
    plan = topology.plan(d, names) if topology is not None else None
    if plan is not None:
        for ns, links in plan.links(names).items():
            inv.link(ns, *links)
        inv.namespaces |= plan.namespaces(names)
        for host_ns in plan._host_by_ns:  # the guests' filters, where their taps are
            inv.tables[host_ns] = {f"bridge {table}", f"inet {table}"}
        bridges = {net_id: names.segment_bridge(topology.network_segments(d, net_id)[0])
                   for net_id in d.networks}
    else:
        inv.tables[fabric] = {f"bridge {table}", f"inet {table}"}
        bridges = {net_id: _bridge(names, net) for net_id, net in d.networks.items()}
        inv.link(fabric, *bridges.values())
    if _feature("trunks") is not None:  # the sub-ports' filters (trunks.py)
        inv.tables.setdefault(fabric, set()).update({f"bridge {table}-trunk",
                                                     f"inet {table}-trunk"})
    for ns in inv.namespaces:
        inv.link(ns, "lo")

    def plug(port: dict, namespace: str, inside: str) -> bool:
        if port["network_id"] not in bridges:
            return False
        node = fabric
        if port["device_owner"].startswith("compute:") and plan is not None:
            placed = plan.placement.get(port["id"])
            if placed is None:
                return False  # its host reaches no segment it can be on
            node = placed[0]
        inv.link(node, names.tap(port["id"]))
        if not namespace.startswith(names.guest("")):  # (a guest's own links are its own)
            inv.link(namespace, "lo", inside)
        return True

    for net in d.networks.values():
        if net.get("router:external") and net["id"] in bridges:
            inv.link(fabric, names._name("o", net["id"]))
            inv.link(outside, "ex-" + net["id"][:8])
    for net_id in d.networks:
        port = d.dhcp_port(net_id)
        v6 = ipv6.dhcp6_config(d, net_id, "tap0") if ipv6 is not None else None
        if port is None or not (d.dhcp_subnets(net_id) or v6):
            continue
        ns = names.dhcp(net_id)
        inv.namespaces.add(ns)
        if plug(port, ns, "tap0") and topology is not None and topology.routed(d, net_id):
            others = sorted((p for p in d.ports.values() if p["network_id"] == net_id
                             and p["device_owner"] == desired_.DHCP_OWNER
                             and p["id"] != port["id"]),
                            key=lambda p: (p.get("created_at") or "", p["id"]))
            for i, other in enumerate(others, start=1):  # a DHCP port per other segment
                plug(other, ns, f"tap{i}")
        inv.dnsmasq.add(net_id)
        inv.metadata.add(net_id)
    for router_id in d.routers:
        ns = names.router(router_id)
        inv.namespaces.add(ns)
        inv.link(ns, "lo")
        inv.tables[ns] = {f"ip {table}", f"ip {table}-pf"}
        advertised = []
        for port in d.by_device.get(router_id, []):
            role = "qg-" if port["device_owner"] == GATEWAY_OWNER else "qr-"
            if plug(port, ns, role + port["id"][:11]) and role == "qr-":
                advertised.append((role + port["id"][:11], port))
        if ipv6 is not None and ipv6.radvd_config(d, advertised):
            inv.radvd.add(router_id)
    trunk_mod = _feature("trunks")
    subports = trunk_mod.subports_of(trunks or []) if trunk_mod is not None else {}
    for server in d.servers.values():
        if server["state"] == "off":
            continue
        ns = names.guest(server["id"])
        inv.namespaces.add(ns)  # (what is inside is the guest's: its own network stack)
        inv.guests.add(server["id"])
        for disk in volumes.wanted(d.volumes.get(server["id"], [])):
            inv.loops.add(f"{server['id']}/{disk.name} {disk.volume_id}")
            inv.nodes.add(f"{server['id']}/{disk.name} {disk.volume_id}")
        ports = [p for p in d.by_device.get(server["id"], [])
                 if p["device_owner"].startswith("compute:") and p["network_id"] in bridges
                 and (plan is None or p["id"] in plan.placement)]
        for i, port in enumerate(ports):
            if plug(port, ns, f"eth{i}"):
                for sub in subports.get(port["id"], []):
                    if sub["port_id"] in d.ports:
                        plug(d.ports[sub["port_id"]], ns, f"eth{i}.{sub['segmentation_id']}")
    return inv


# ------------------------------------------------------------------ the live kernel
def observed(names: Names, run_dir: Path, volumes_dir: Path | None = None) -> Inventory:
    """The cloud's objects in the kernel now (root: it enters every namespace of ours);
    `volumes_dir` the block-storage backend's, whose files' loop devices are the cloud's."""
    inv = Inventory()
    inv.namespaces = set(kernel.list_namespaces(names.prefix))
    from pyroute2 import IPRoute

    for ns in inv.namespaces:
        if ns.startswith(names.guest("")):
            continue  # the guest's own network stack: nothing of ours is inside
        try:  # a thread in the namespace (never made again if it went meanwhile)
            inv.links[ns], inv.tables[ns] = read_in(ns, _links_and_tables)
        except OSError:
            continue

    with IPRoute() as ip:
        inv.host_links = {link.get("ifname") for link in ip.get_links()
                          if names.owns(link.get("ifname") or "")}
    inv.guests = {sid for sid, pid in _pid_files(run_dir / "guests")
                  if str(run_dir / "guests" / sid).encode() in _cmdline(pid)}
    inv.dnsmasq = {net for net, pid in _pid_files(run_dir / "dhcp")
                   if _exe(pid).endswith("dnsmasq") and not _zombie(pid)}
    inv.radvd = {router for router, pid in _pid_files(run_dir / "radvd")
                 if _exe(pid).endswith("radvd") and not _zombie(pid)}
    for ns in inv.namespaces:
        if ns.startswith(names.dhcp("")) and _listens(ns, *METADATA_LISTEN):
            inv.metadata.add(ns[len(names.dhcp("")):])
    inv.strays = _strays(run_dir, inv)
    inv.loops, inv.nodes = _volumes(run_dir, volumes_dir, inv.guests)
    return inv


def _volumes(run_dir: Path, volumes_dir: Path | None, guests: set[str]
             ) -> tuple[set[str], set[str]]:
    """The volumes' loop devices (by their records, and any other over a volume's file:
    "(no attachment)/<loop> <volume id>") and the block nodes in running guests' /dev
    (by the loop device each one opens; "?" for a device that is none of them)."""
    loops, nodes = set(), set()
    by_rdev: dict[int, str] = {}  # loop's device number -> "<vdX> <volume id>"
    recorded = set()
    for server_id, records in volumes.Volumes(run_dir).attached().items():
        for volume_id, data in records.items():
            loops.add(f"{server_id}/{data.get('name', '?')} {volume_id}")
            recorded.add(data["loop"])
            try:
                by_rdev[os.stat(data["loop"]).st_rdev] = volume_id
            except OSError:
                continue
    if volumes_dir is not None:
        for loop, file in volumes.loops_backing(volumes_dir).items():
            if loop not in recorded:
                loops.add(f"(no attachment)/{loop.removeprefix('/dev/')} {Path(file).name}")
    launchers = dict(_pid_files(run_dir / "guests"))
    children: dict[int, list[int]] = {}
    for pid in _descendants(set(launchers.values())):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(pid)
    for server_id in guests:
        inside = volumes.guest_process(launchers[server_id], children)
        try:
            found = volumes.nodes(inside) if inside is not None else {}
        except OSError:
            continue
        for name, rdev in found.items():
            nodes.add(f"{server_id}/{name} {by_rdev.get(rdev, '?')}")
    return loops, nodes


NFT_FAMILIES = {1: "inet", 2: "ip", 3: "arp", 5: "netdev", 7: "bridge", 10: "ip6"}


def _links_and_tables() -> tuple[set[str], set[str]]:
    """This thread's namespace's link names and nftables tables ("family name"), by
    netlink (a few ms; `nft` in a subprocess cost 25 ms a namespace)."""
    from pyroute2 import IPRoute
    from pyroute2.nftables.main import NFTables

    with IPRoute() as ip:
        links = {link.get("ifname") for link in ip.get_links()}
    nft = NFTables(nfgen_family=0)  # every family
    try:
        tables = {f"{NFT_FAMILIES.get(t['nfgen_family'], t['nfgen_family'])} "
                  f"{t.get_attr('NFTA_TABLE_NAME')}" for t in nft.get_tables()}
    finally:
        nft.close()
    return links, tables


def _pid_files(directory: Path) -> Iterator[tuple[str, int]]:
    if not directory.is_dir():
        return
    for entry in directory.iterdir():
        try:
            yield entry.name, int((entry / "pid").read_text())
        except (OSError, ValueError):
            continue


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _zombie(pid: int) -> bool:
    try:
        return ") Z" in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True


def _listens(ns: str, address: str, port: str) -> bool:
    """A TCP socket listening on address:port in the namespace (its /proc/net/tcp)."""
    try:
        table = read_in(ns, lambda: Path("/proc/thread-self/net/tcp").read_text())
    except OSError:
        return False
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[1] == f"{address}:{port}" and fields[3] == "0A":
            return True
    return False


def read_in(ns: str, fn: Callable[[], T]) -> T:
    """fn() in a thread that entered the namespace, never creating it (pyroute2's setns
    creates a missing one by default)."""
    from pyroute2 import netns

    result: dict[str, Any] = {}

    def run() -> None:
        try:
            netns.setns(ns, flags=0)
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["error"] = exc

    thread = threading.Thread(target=run, name=f"read-{ns}")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def _descendants(roots: set[int]) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out = set(roots)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in out and pid not in out:
                out.add(pid)
                changed = True
    return out


def _strays(run_dir: Path, inv: Inventory) -> set[str]:
    """Processes whose command line names the run directory but that no pid file owns
    (a guest or dnsmasq whose pid file is gone, or anything else started there)."""
    owned = {pid for _, pid in _pid_files(run_dir / "guests")} | \
        {pid for _, pid in _pid_files(run_dir / "dhcp")} | \
        {pid for _, pid in _pid_files(run_dir / "radvd")}
    owned = _descendants(owned)
    marker = str(run_dir).encode()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in owned or int(entry) == os.getpid():
            continue
        cmdline = _cmdline(int(entry))
        if marker + b"/" in cmdline and not _zombie(int(entry)):
            text = cmdline.replace(b"\0", b" ").decode(errors="replace")
            out.add(f"{entry}: {text[:120]}")
    return out


# ------------------------------------------------------------------ the difference
@dataclass(frozen=True)
class Difference:
    kind: str  # namespace, link, nftables table, guest, dnsmasq, radvd, metadata, process
    name: str  # what it is, e.g. "sl1a2b-fabric/sl1a2b-t0f3c..."
    expected: str  # "present" or "absent"
    actual: str

    @property
    def message(self) -> str:
        if self.expected == "present":
            return f"{self.kind} {self.name} is missing"
        return f"{self.kind} {self.name} carries the cloud's prefix but nothing wants it"


def compare(want: Inventory, have: Inventory) -> list[Difference]:
    out: list[Difference] = []

    def diff(kind: str, wanted: set[str], present: set[str]) -> None:
        out.extend(Difference(kind, n, "present", "missing") for n in sorted(wanted - present))
        out.extend(Difference(kind, n, "absent", "present") for n in sorted(present - wanted))

    diff("namespace", want.namespaces, have.namespaces)
    for ns in sorted(want.namespaces & have.namespaces):
        diff("link", {f"{ns}/{n}" for n in want.links.get(ns, set())},
             {f"{ns}/{n}" for n in have.links.get(ns, set())})
        diff("nftables table", {f"{ns}/{t}" for t in want.tables.get(ns, set())},
             {f"{ns}/{t}" for t in have.tables.get(ns, set())})
    diff("link", set(), {f"(machine)/{n}" for n in have.host_links})
    diff("guest", want.guests, have.guests)
    diff("dnsmasq", want.dnsmasq, have.dnsmasq)
    diff("radvd", want.radvd, have.radvd)
    diff("metadata", want.metadata, have.metadata)
    diff("process", set(), have.strays)
    diff("volume loop device", want.loops, have.loops)
    # (a guest whose launcher runs but that is not past its pivot yet has no /dev to read)
    diff("volume device node", {n for n in want.nodes if n.split("/")[0] in have.guests},
         have.nodes)
    return out
