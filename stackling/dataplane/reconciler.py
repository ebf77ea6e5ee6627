"""The level-triggered reconciler: each pass reads the desired state and makes the cloud's
kernel objects match it (create what is missing, fix what differs, delete what no longer
belongs), one object at a time, so one failing object never blocks the others and the
next pass retries it. A pass from nothing (a start after kill -9) converges the same way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import netaddr

from stackling.common.db import Database
from stackling.compute import interface as compute
from stackling.dataplane import conntrack, firewall, guest_jobs, images, ipv6, kernel, nft, rootfs, topology
from stackling.dataplane import desired as desired_
from stackling.dataplane import port_forwarding as forwarding
from stackling.dataplane import qos as qos_
from stackling.dataplane import trunks as trunk_ports
from stackling.dataplane import volumes as volumes_
from stackling.dataplane.agents import AgentReporter
from stackling.dataplane.desired_extras import Extras
from stackling.dataplane.desired_extras import read as read_extras
from stackling.dataplane.dhcp import METADATA_IP, DhcpConfig, DhcpServers, DhcpSubnet
from stackling.dataplane.dhcp_names import build as dhcp_names_of
from stackling.dataplane.guests import Guests, GuestSpec
from stackling.dataplane.metadata import METADATA_IPV6, MetadataServers, documents
from stackling.dataplane.names import Names
from stackling.dataplane.snapshots import Snapshots

LOG = logging.getLogger(__name__)
DEFAULT_USER = "cirros"
FULL_EVERY = 30  # passes
# How long a boot waits for a port of its server that is not placed on the wire yet (a port
# bound a moment after its server turned ACTIVE): a guest booted without its NIC has no
# address, metadata or key at boot, as a VM started before its NIC was plugged
BOOT_HOLD = 30.0  # seconds


# Where cloud-init's ConfigDrive source (and its ds-identify) reads a config drive's tree
# when no block device is there: this kernel has no ISO 9660 and a guest in its own user
# namespace cannot mount a block device's filesystem, so Nova's config drive layout is
# written onto the server's root disk, under the dated version and `latest`, as Nova's.
CONFIG_DRIVE = "var/lib/cloud/seed/config_drive"
CONFIG_DRIVE_VERSIONS = ("2018-08-27", "latest")


def config_drive(server: dict[str, Any], ports: list[dict[str, Any]],
                 d: desired_.Desired) -> dict[str, bytes]:
    docs = documents(server, ports, d.subnets, d.networks)
    out = {}
    for name in ("meta_data.json", "network_data.json", "vendor_data.json",
                 "vendor_data2.json", "user_data"):
        body = docs.get(f"openstack/latest/{name}")
        if body is None:
            continue
        for version in CONFIG_DRIVE_VERSIONS:
            out[f"{CONFIG_DRIVE}/openstack/{version}/{name}"] = (
                body if isinstance(body, bytes) else body.encode())
    return out


def _image_of(server: dict[str, Any]) -> tuple[str, ...]:
    found = server.get("image") or {}
    if not found.get("data"):
        return ()
    return (found["id"], found["data"], found.get("disk_format") or "",
            found.get("container_format") or "", found.get("checksum") or "")


def disk_gb(server: dict[str, Any]) -> int:
    """The root disk's size in GiB: the flavor's disk; a flavor with none (disk 0) sizes it
    from the image, as Nova's libvirt driver does then (its virtual size, else its size,
    rounded up to GiB, at least 1)."""
    if server.get("root_gb"):
        return int(server["root_gb"])
    found = server.get("image") or {}
    size = found.get("virtual_size") or found.get("size") or 0
    return max(1, -(-int(size) // (1 << 30)))


class Reconciler:
    def __init__(self, database: Database, prefix: str, data_dir: Path,
                 guest_processes: int = 1024, shutdown_timeout: float = 60.0) -> None:
        self.database = database
        self.shutdown_timeout = shutdown_timeout  # dataplane.shutdown_timeout (Nova's)
        self.wake: Any = lambda: None  # the loop's: a power-off that ended asks for a pass
        self.names = Names(prefix)
        self.run_dir = Path("/run/stackling") / prefix
        self.console_dir = data_dir / "dataplane" / "console"
        self.template = rootfs.template_dir(data_dir / "dataplane")
        self.images_dir = data_dir / "dataplane" / "images"
        self.guests = Guests(self.run_dir, self.run_dir / "rootfs", self.console_dir, prefix,
                             guest_processes, data_dir / "dataplane" / "disks")
        self.volumes = volumes_.Volumes(self.run_dir)  # attachments' loop devices
        self.dhcp = DhcpServers(self.run_dir)
        self.radvd = ipv6.Radvd(self.run_dir)
        self.metadata = MetadataServers(self._metadata_for)
        self._docs: dict[tuple[str, str], dict[str, Any]] = {}
        self.failures: dict[str, str] = {}  # object key -> last error, retried next pass
        self._nft: dict[str, str] = {}
        self._jobs = guest_jobs.Jobs(self._try)  # per-guest work of a pass, run by threads
        self._allowed: dict[str, frozenset] = {}  # guest -> what its rules let through
        self.handles = kernel.Handles()
        self.wire = topology.Wire(self.names, self.handles, self._ensure_namespace, self._try,
                                  lambda: self.failures)
        self.agents = AgentReporter(database)
        self.extras = Extras()  # port forwardings, QoS rules, trunks (desired_extras.py)
        self.qos = qos_.Limits()
        self._trunk_nics: dict[str, set[str]] = {}  # guest namespace -> sub-port NICs
        self.trunk_filters = trunk_ports.SubportFilters()
        # guest -> what was last applied in full; a pass skips a guest whose desired state,
        # namespace, fabric ports and process are unchanged, and every FULL_EVERY-th pass
        # checks everything again (a hand-made change inside a namespace is repaired then)
        self._applied: dict[str, Any] = {}
        self._passes = 0
        self._present: set[str] = set()
        self._fabric_links: set[str] = set()
        self._held: dict[str, float] = {}  # server id -> when its boot first waited for a port
        self._members: dict[str, dict[str, set[str]]] = {}  # group -> its members' addresses
        self.snapshots = Snapshots(database, prefix, self.run_dir, data_dir, self.images_dir,
                                   self.guests)  # createImage's captures (snapshots.py)

    # ------------------------------------------------------------------ one pass
    def reconcile(self) -> bool:
        """One full pass; True when every object converged."""
        self.failures = {}
        self._passes += 1
        if self._passes % FULL_EVERY == 0:
            self._applied.clear()
            self.wire.forget()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir.chmod(0o755)
        if not (self.template / ".complete").exists():
            rootfs.build(self.template)
            if not self.guests.known():
                rootfs.prune(self.template)
        rootfs.publish(self.template, self.run_dir)
        with self.database.transaction(write=False) as db:
            d = desired_.read(db)
            self.extras = read_extras(db, list(d.ports.values()))
        self._ensure_dhcp_ports(d)
        self._ensure_segment_dhcp_ports(d)
        self.handles.prune(set(kernel.list_namespaces(self.names.prefix)))
        self._ensure_namespace(self.names.fabric)
        keep_ns = {self.names.fabric}
        fabric = self.handles.get(self.names.fabric)
        bridges = self._networks(d, fabric)
        keep_links = set(bridges.values()) | self.wire.keep.get(self.names.fabric, set())
        keep_ns |= self.wire.plan.namespaces(self.names) if self.wire.plan else set()
        keep_ns |= self._outside(d, fabric, bridges, keep_links)
        keep_ns |= self._dhcp_servers(d, fabric, bridges, keep_links)
        keep_ns |= self._routers(d, fabric, bridges, keep_links)
        keep_ns |= self._guests(d, fabric, bridges, keep_links)
        self._try("snapshots", self.snapshots.reconcile, d)
        self._try("qos", qos_.apply, self.qos, self.handles, d, self.extras.qos,
                  lambda port_id: (self.wire.place(port_id) or ("",))[0]
                  if getattr(self, "wire", None) else self.names.fabric,
                  self.names.tap, set(kernel.list_namespaces(self.names.prefix)))
        nics = self._try(
            "trunks", trunk_ports.plug, self.handles, d, self.extras.trunks, self.names.guest,
            set(kernel.list_namespaces(self.names.prefix)),
            lambda d_, port, ns, inside: self._plug(fabric, bridges, keep_links, d_, port, ns,
                                                    inside), self._try, self._trunk_nics,
            self.guests.hotplug)
        self._trunk_nics = self._trunk_nics if nics is None else nics
        self._try("trunk filters", self.trunk_filters.apply, self.names.prefix,
                  self.names.fabric, self.extras.trunks, d.ports, self.names.tap,
                  d.security_groups, self._members, set(bridges.values()))
        self.wire.finish()
        for name, _link in fabric.links().items():
            if self.names.owns(name) and name not in keep_links:
                self._try(f"link {name}", fabric.delete_link, name)
        for name in kernel.list_namespaces(self.names.prefix):
            if name not in keep_ns:
                self._nft.pop(name, None)
                self.handles.drop(name)
                self._try(f"namespace {name}", kernel.remove_namespace, name)
        self._try("agents heartbeat", self.agents.report, d)
        status = {"pass": self._passes, "at": time.time(), "converged": not self.failures,
                  "failures": len(self.failures), "pid": os.getpid()}
        # observed, for tools: written aside and renamed, so a reader never sees half of it
        tmp = self.run_dir / f"status.json.{os.getpid()}"
        tmp.write_text(json.dumps(status))
        tmp.replace(self.run_dir / "status.json")
        if self.failures:
            LOG.warning("dataplane: %d object(s) not converged, retried next pass: %s",
                        len(self.failures), "; ".join(f"{k}: {v}" for k, v in
                                                      sorted(self.failures.items())[:5]))
        return not self.failures

    def _ensure_namespace(self, name: str) -> bool:
        if kernel.ensure_namespace(name, ipv6=not self.names.switching_only(name),
                                   parent=None if name == self.names.fabric
                                   else self.names.fabric):
            self.handles.drop(name)
            self._nft.pop(name, None)  # a new namespace has none of the tables written before
            return True
        return False

    def _try(self, key: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - per-object retry on the next pass
            LOG.debug("dataplane: %s failed", key, exc_info=True)
            self.failures[key] = f"{type(exc).__name__}: {exc}"
            return None

    # ------------------------------------------------------------------ L2
    def _networks(self, d: desired_.Desired, fabric: kernel.Ns) -> dict[str, str]:
        """The wire (topology.py: hosts, physnet switches, tunnels, ToRs); returns each
        network's bridge on the network node (its first segment's)."""
        self.wire.apply(d)
        return {net_id: self.wire.bridge(topology.network_segments(d, net_id)[0]["id"])
                for net_id in d.networks}

    def _plug(self, fabric: kernel.Ns, bridges: dict[str, str], keep_links: set[str],
              d: desired_.Desired, port: dict[str, Any], namespace: str, inside: str) -> bool:
        """A port's veth: a guest's from its host's namespace, on its segment's bridge there
        (a live migration moves the tap over from the old host, never the guest's side);
        any other port's from the network node, on its segment's bridge."""
        if port["network_id"] not in bridges:
            return False
        tap = self.names.tap(port["id"])
        node, keep = fabric, keep_links
        if port["device_owner"].startswith("compute:"):
            placed = self.wire.place(port["id"])
            if placed is None:
                return False  # its host reaches no segment it can be on (plan.cuts says why)
            node, keep = self.handles.get(placed[0]), self.wire.keep.setdefault(placed[0], set())
            bridge = placed[1]
            moved = self._try(f"port {port['id']} move", self.wire.adopt, tap, placed[0])
        else:
            seg = topology.port_segment(d, port)
            bridge = self.wire.bridge(seg["id"]) if seg else bridges[port["network_id"]]
            moved = False
        keep.add(tap)
        mtu = d.networks[port["network_id"]].get("mtu") or 1500
        ok = self._try(f"port {port['id']}", node.ensure_veth_into, tap,
                       self.names.peer(port["id"]), self.handles.get(namespace), inside,
                       bridge=bridge,
                       mac=port["mac_address"], mtu=mtu) is not False and \
            f"port {port['id']}" not in self.failures
        if ok and moved:
            self._try(f"port {port['id']} announce", kernel.announce, namespace, inside,
                      [ip for _, ip in d.ipv4(port)])
        return ok

    # ------------------------------------------------------------------ outside
    def _outside(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
                 keep_links: set[str]) -> set[str]:
        """The outside world: a namespace on every external network, holding its subnets'
        gateway addresses (where DevStack's br-ex holds them)."""
        ns = self.names.outside
        self._try("namespace outside", self._ensure_namespace, ns)
        for net in d.networks.values():
            if not net.get("router:external") or net["id"] not in bridges:
                continue
            link = self.names._name("o", net["id"])
            inside = "ex-" + net["id"][:8]
            keep_links.add(link)
            self._try(f"outside {net['id']}", fabric.ensure_veth_into, link,
                      self.names._name("q", net["id"]), self.handles.get(ns), inside,
                      bridge=bridges[net["id"]], mac=None, mtu=net.get("mtu") or 1500)
            cidrs = [f"{s['gateway_ip']}/{netaddr.IPNetwork(s['cidr']).prefixlen}"
                     for s in (d.subnets.get(i) for i in net.get("subnets", []))
                     if s and s.get("gateway_ip") and s["ip_version"] == 4]

            def address(inside: str = inside, cidrs: list[str] = cidrs) -> None:
                self.handles.get(ns).ensure_addresses(inside, cidrs)

            self._try(f"outside {net['id']} addresses", address)
        self._try("outside ipv6", ipv6.outside, self.handles.get(ns), d)
        return {ns}

    # ------------------------------------------------------------------ DHCP + metadata
    def _ensure_dhcp_ports(self, d: desired_.Desired) -> None:
        for net_id, net in d.networks.items():
            subnets = topology.first_segment_only(
                d, net_id, d.dhcp_subnets(net_id) + ipv6.dhcp_subnets(d, net_id))
            if subnets and d.dhcp_port(net_id) is None and not net.get("router:external"):
                def create(net_id: str = net_id, net: dict[str, Any] = net,
                           subnets: list[dict[str, Any]] = subnets) -> None:
                    with self.database.transaction() as db:
                        desired_.ensure_dhcp_port(db, net_id, f"dhcp{self.names.prefix}-{net_id}",
                                                  [s["id"] for s in subnets], net["project_id"])

                self._try(f"dhcp port {net_id}", create)
        grown = self._try("dhcp ports ipv6", ipv6.extend_dhcp_ports, self.database, d)
        if grown or any(k.startswith("dhcp port") for k in self.failures) or any(
                (d.dhcp_subnets(n) or ipv6.dhcp_subnets(d, n)) and d.dhcp_port(n) is None
                and not net.get("router:external")
                for n, net in d.networks.items()):
            with self.database.transaction(write=False) as db:
                fresh = desired_.read(db)
            d.ports, d.by_device = fresh.ports, fresh.by_device

    def _dhcp_servers(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
                      keep_links: set[str]) -> set[str]:
        keep = set()
        docs: dict[tuple[str, str], dict[str, Any]] = {}
        for net_id, net in d.networks.items():
            port = d.dhcp_port(net_id)
            subnets = d.dhcp_subnets(net_id)
            dhcp6 = ipv6.dhcp6_config(d, net_id, "tap0")
            if port is None or not (subnets or dhcp6):
                continue
            ns = self.names.dhcp(net_id)
            keep.add(ns)
            self._try(f"namespace {ns}", self._ensure_namespace, ns)
            if f"namespace {ns}" in self.failures:
                continue
            if not self._plug(fabric, bridges, keep_links, d, port, ns, "tap0"):
                continue
            addresses, per_subnet = self._dhcp_segments(fabric, keep_links, d, port, ns)

            def configure(ns: str = ns, addresses: list[str] = addresses) -> None:
                self.handles.get(ns).ensure_addresses("tap0", [*addresses, f"{METADATA_IP}/32"])

            self._try(f"dhcp {net_id} addresses", configure)
            metadata6 = self._try(f"dhcp {net_id} ipv6", ipv6.dhcp_namespace,
                                  self.handles.get(ns), "tap0", d, port)
            server_ip = addresses[0].split("/")[0] if addresses else METADATA_IP
            hosts = []
            for p in d.ports.values():
                if p["network_id"] != net_id or p["device_owner"] == desired_.DHCP_OWNER:
                    continue
                for subnet_id, ip in d.ipv4(p):
                    if d.subnets[subnet_id]["enable_dhcp"]:
                        hosts.append((p["id"], p["mac_address"], ip, p["device_id"]))
                server = d.servers.get(p["device_id"])
                if server is not None:
                    mine = d.by_device.get(p["device_id"], [])
                    body = documents(server, mine, d.subnets, d.networks)
                    body = trunk_ports.with_vlans(body, mine, self.extras.trunks, d.ports,
                                                  d.networks)
                    # its addresses on this network: IPv4, and where the IPv6 socket
                    # listens its link-local (the EUI-64 of its MAC, as anti-spoofing
                    # allows) and fixed IPv6 ones
                    sources = [ip for _, ip in d.ipv4(p)]
                    if metadata6:
                        sources += [ip for _, ip in ipv6.ipv6(d, p)]
                        sources.append(str(netaddr.EUI(p["mac_address"]).ipv6_link_local()))
                    for ip in sources:
                        docs[(net_id, ip)] = body
            cfg = DhcpConfig(net_id, "tap*" if per_subnet else "tap0", server_ip,
                             net.get("mtu") or 1500,
                             [DhcpSubnet(s["id"], s["cidr"], s.get("gateway_ip"),
                                         s.get("dns_nameservers") or [], s.get("host_routes") or [],
                                         per_subnet.get(s["id"]))
                              for s in subnets], hosts)
            cfg.ipv6 = dhcp6
            cfg.names = dhcp_names_of(net, [p for p in d.ports.values()
                                            if p["network_id"] == net_id
                                            and p["device_owner"] != desired_.DHCP_OWNER])
            self._try(f"dnsmasq {net_id}", self.dhcp.ensure, cfg, ns)
            self._try(f"metadata {net_id}", self.metadata.ensure, net_id,
                      lambda ns=ns: kernel.listen_tcp(ns, METADATA_IP, 80))
            if metadata6:
                self._try(f"metadata {net_id} ipv6", self.metadata.ensure, net_id,
                          lambda ns=ns: kernel.listen_tcp(ns, METADATA_IPV6, 80, "tap0"), 6,
                          self.handles.get(ns).index("tap0"))
            elif metadata6 is False:
                self.metadata.stop(net_id, (6,))
        self._docs = docs
        wanted = {n for n in d.networks if self.names.dhcp(n) in keep}
        for net_id in set(self.dhcp.known()) - wanted:
            self._try(f"dnsmasq {net_id}", self.dhcp.stop, net_id)
        for net_id in self.metadata.networks() - wanted:
            self.metadata.stop(net_id)
        return keep

    def _ensure_segment_dhcp_ports(self, d: desired_.Desired) -> None:
        """A routed network's DHCP ports: one per segment with DHCP subnets, so each
        segment's guests have an on-link DHCP server and metadata next hop."""
        made = False
        for net_id, net in d.networks.items():
            if net.get("router:external") or not topology.routed(d, net_id):
                continue
            ports = [p for p in d.ports.values()
                     if p["network_id"] == net_id and p["device_owner"] == desired_.DHCP_OWNER]
            if not ports:
                continue  # the network's first DHCP port is _ensure_dhcp_ports'
            have = {(topology.port_segment(d, p) or {}).get("id") for p in ports}
            wanted: dict[str, list[str]] = {}
            for subnet in d.dhcp_subnets(net_id):
                if subnet.get("segment_id") and subnet["segment_id"] not in have:
                    wanted.setdefault(subnet["segment_id"], []).append(subnet["id"])
            for seg_id, subnet_ids in sorted(wanted.items()):
                def create(net_id: str = net_id, seg_id: str = seg_id,
                           subnet_ids: list[str] = subnet_ids, project: str = net["project_id"]
                           ) -> None:
                    with self.database.transaction() as db:
                        desired_.create_segment_dhcp_port(
                            db, net_id, f"dhcp{self.names.prefix}-{net_id}-{seg_id}",
                            subnet_ids, project)

                made |= self._try(f"dhcp port {net_id} segment {seg_id}", create) is None
        if made:
            with self.database.transaction(write=False) as db:
                fresh = desired_.read(db)
            d.ports, d.by_device = fresh.ports, fresh.by_device

    def _dhcp_segments(self, fabric: kernel.Ns, keep_links: set[str], d: desired_.Desired,
                       port: dict[str, Any], ns: str) -> tuple[list[str], dict[str, str]]:
        """tap0's IPv4 addresses (the network's first DHCP port's); on a routed network
        also `tap1`... for its DHCP ports on the other segments (each on its segment's
        bridge on the network node, with its own MAC and addresses), and subnet -> the
        DHCP address on it (the metadata route's on-link next hop there)."""
        own = [f"{ip}/{d.prefixlen(s)}" for s, ip in d.ipv4(port)]
        if not topology.routed(d, port["network_id"]):
            return own, {}
        others = sorted((p for p in d.ports.values() if p["network_id"] == port["network_id"]
                         and p["device_owner"] == desired_.DHCP_OWNER and p["id"] != port["id"]),
                        key=lambda p: (p.get("created_at") or "", p["id"]))
        per_subnet = {s: ip for p in (port, *others) for s, ip in d.ipv4(p)}
        dns = self.handles.get(ns)
        for i, other in enumerate(others, start=1):
            inside = f"tap{i}"
            if self._plug(fabric, {other["network_id"]: ""}, keep_links, d, other, ns, inside):
                self._try(f"dhcp {port['network_id']} {inside}", dns.ensure_addresses, inside,
                          [f"{ip}/{d.prefixlen(s)}" for s, ip in d.ipv4(other)])
        for name in dns.links():
            if name.startswith("tap") and name[3:].isdigit() and int(name[3:]) > len(others):
                dns.delete_link(name)
        return own, per_subnet

    def _metadata_for(self, network_id: str, address: str) -> dict[str, Any] | None:
        return self._docs.get((network_id, address))

    # ------------------------------------------------------------------ routers
    def _routers(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
                 keep_links: set[str]) -> set[str]:
        """Neutron's L3 agent's shape: a namespace per router, `qr-` per subnet interface,
        `qg-` on the external network with SNAT and the floating IPs as 1:1 NAT."""
        keep = set()
        for router_id, router in d.routers.items():
            ns = self.names.router(router_id)
            keep.add(ns)
            self._try(f"namespace {ns}", self._ensure_namespace, ns)
            if f"namespace {ns}" in self.failures:
                continue
            self._try(f"router {router_id}", self._router, d, fabric, bridges, keep_links,
                      router, ns)
        for router_id in set(self.radvd.known()) - set(d.routers):
            self._try(f"radvd {router_id}", self.radvd.stop, router_id)
        return keep

    def _router(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
                keep_links: set[str], router: dict[str, Any], ns: str) -> None:
        ports = d.by_device.get(router["id"], [])
        internal, gateway = [], None
        rns = self.handles.get(ns)
        wanted_links = {"lo"}
        for port in ports:
            role = "qg-" if port["device_owner"] == desired_.GATEWAY_OWNER else "qr-"
            inside = role + port["id"][:11]
            if not self._plug(fabric, bridges, keep_links, d, port, ns, inside):
                continue
            wanted_links.add(inside)
            addresses = [f"{ip}/{d.prefixlen(s)}" for s, ip in d.ipv4(port)]
            if role == "qg-":
                gateway = (inside, port)
                fips = [f["floating_ip_address"] for f in d.floating_ips
                        if f.get("router_id") == router["id"] and f.get("fixed_ip_address")]
                addresses += [f"{ip}/32" for ip in fips]
                addresses += forwarding.addresses(self.extras.port_forwardings, router["id"])
            else:
                internal += [d.subnets[s]["cidr"] for s, _ in d.ipv4(port)]
            rns.ensure_addresses(inside, addresses)
            ipv6.router_port(rns, inside, d, port)
        routes = {}
        if gateway is not None:
            for subnet_id, _ in d.ipv4(gateway[1]):
                gw = d.subnets[subnet_id].get("gateway_ip")
                if gw:
                    routes["0.0.0.0/0"] = gw
        for route in router.get("routes") or []:
            if ":" not in route["destination"]:
                routes[str(netaddr.IPNetwork(route["destination"]).cidr)] = route["nexthop"]
        rns.ensure_routes(routes)
        rns.sysctl("net.ipv4.ip_forward", "1" if router.get("admin_state_up", True) else "0")
        ipv6.router_routes(rns, d, router, gateway[1] if gateway else None)
        self.radvd.ensure(router["id"], ns, ipv6.radvd_config(
            d, [(n, p) for p in ports if (n := "qr-" + p["id"][:11]) in wanted_links]))
        for name in set(rns.links()) - wanted_links:
            rns.delete_link(name)
        self._nft_apply(ns, self._router_rules(d, router, internal, gateway) + forwarding.ruleset(
            self.names.prefix, self.extras.port_forwardings if gateway else [], router["id"]))

    def _router_rules(self, d: desired_.Desired, router: dict[str, Any], internal: list[str],
                      gateway: tuple[str, dict[str, Any]] | None) -> str:
        table = self.names.prefix
        pre, post = [], []
        if gateway is not None:
            qg, port = gateway
            for fip in d.floating_ips:
                if fip.get("router_id") == router["id"] and fip.get("fixed_ip_address"):
                    pre.append(f"ip daddr {fip['floating_ip_address']} dnat to "
                               f"{fip['fixed_ip_address']}")
                    post.append(f"oifname \"{qg}\" ip saddr {fip['fixed_ip_address']} snat to "
                                f"{fip['floating_ip_address']}")
            snat = (router.get("external_gateway_info") or {}).get("enable_snat", True)
            gw_ips = [ip for _, ip in d.ipv4(port)]
            if snat and gw_ips and internal:
                post.append(f"oifname \"{qg}\" ip saddr {{ {', '.join(sorted(set(internal)))} }} "
                            f"snat to {gw_ips[0]}")
        forward = "accept" if router.get("admin_state_up", True) else "drop"
        return (f"table ip {table} {{}}\ndelete table ip {table}\n"
                f"table ip {table} {{\n"
                f"  chain prerouting {{ type nat hook prerouting priority dstnat; policy accept;\n"
                + "".join(f"    {r}\n" for r in pre) + "  }\n"
                "  chain postrouting { type nat hook postrouting priority srcnat; policy accept;\n"
                + "".join(f"    {r}\n" for r in post) + "  }\n"
                f"  chain forward {{ type filter hook forward priority filter; policy {forward}; }}\n"
                "}\n")

    def _nft_apply(self, ns: str, ruleset: str) -> None:
        """The whole table in one nftables transaction (the kernel never sees half of it)."""
        digest = hashlib.sha256(ruleset.encode()).hexdigest()
        if self._nft.get(ns) == digest:
            return
        nft.apply(ns, ruleset)
        self._nft[ns] = digest

    # ------------------------------------------------------------------ guests
    def _guests(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
                keep_links: set[str]) -> set[str]:
        keep = set()
        running = self.guests.running()
        self._present = set(kernel.list_namespaces(self.names.prefix))
        compute_ports = [p for p in d.ports.values() if p["device_owner"].startswith("compute:")]
        self._members = firewall.group_members(compute_ports)
        # every guest's filter in its host's namespace before any guest boots (a rule for a
        # tap not plugged yet matches nothing)
        self._host_filters(d)
        for server in d.servers.values():
            if server["state"] == "off":
                continue
            if self._passes % FULL_EVERY == 0:
                self.guests.trim_console(server["id"])
            ns = self.names.guest(server["id"])
            keep.add(ns)
            if server["state"] == "stopping":  # (os-stop: SHUTOFF once its guest is gone)
                self._try(f"guest {server['id']}", self._power_off, d, server, True)
                continue
            self._try(f"guest {server['id']}", self._guest, d, fabric, bridges, keep_links,
                      server, ns, running, self._members)
        self._jobs.wait()
        self._boundary_faults(d, running)
        wanted = {s for s in d.servers if self.names.guest(s) in keep}
        for server_id in set(self.guests.known()) - wanted:
            self._try(f"guest {server_id}", self.guests.stop, server_id)
        # a guest's volumes' loop devices go with it (a stopped server's too: no guest)
        for server_id in set(self.volumes.known()) - wanted:
            self._try(f"volumes {server_id}", self.volumes.release_server, server_id)
        # a root disk goes with its server (a stopped one keeps it)
        for server_id in set(self.guests.disks.known()) - set(d.servers) - set(self.guests.known()):
            self._try(f"disk {server_id}", self.guests.disks.delete, server_id)
        return keep

    def _power_off(self, d: desired_.Desired, server: dict[str, Any], stopping: bool) -> bool:
        """A clean power-off (guests.power_off), as Nova's _clean_shutdown: its init asked,
        killed after the image's os_shutdown_timeout or dataplane.shutdown_timeout; True
        while it is under way. The wait is a thread's: the pass goes on with the others
        (the guest's namespace and NICs kept meanwhile), and its end is recorded by that
        thread: a stop's server STOPPED (compute.guest_stopped; that write wakes the loop),
        a reboot's next pass asked for (it boots the guest again). A guest that cannot hear
        (cirros) is stopped here, at once, as before. Level-triggered: a pass that finds a
        server still stopping and its guest gone (a write that failed, a crash) ends it."""
        self._keep_plugged(d, server)
        if self.guests.powering_off(server["id"]):
            return True
        value = (server.get("image") or {}).get("os_shutdown_timeout")
        try:  # (0: killed at once, as Nova)
            timeout = float(value) if value not in (None, "") else self.shutdown_timeout
        except (TypeError, ValueError):
            timeout = self.shutdown_timeout

        def then(server_id: str = server["id"]) -> None:
            if stopping:
                with self.database.transaction() as db:
                    compute.guest_stopped(db, server_id)
            else:
                self.wake()

        if self.guests.power_off(server["id"], timeout, then):
            return True
        if stopping:
            then()
        return False

    def _keep_plugged(self, d: desired_.Desired, server: dict[str, Any]) -> None:
        """A guest powering off keeps its NICs (its services may talk on their way down)."""
        for port in d.by_device.get(server["id"], []):
            place = self.wire.place(port["id"]) if \
                port["device_owner"].startswith("compute:") else None
            if place is not None:
                self.wire.keep.setdefault(place[0], set()).add(self.names.tap(port["id"]))

    def _image_root(self, spec: GuestSpec) -> Path | None:
        """The guest's image's root filesystem, prepared once per image (in the boot's job:
        a qcow2's conversion takes seconds); None for an image with no data (the kit's own
        root filesystem). ImageError when the image cannot boot."""
        if not spec.image or not spec.image[1]:
            return None
        image_id, data, disk_format, container_format, _ = spec.image
        return images.prepare(image_id, Path(data), disk_format, container_format,
                              self.images_dir, self.names.prefix).root

    def _image_fault(self, server_id: str, message: str) -> None:
        """The server ERROR with the image's reason, as Nova's build of an image it cannot
        boot ends."""
        with self.database.transaction() as db:
            compute.fail_server(db, server_id, message)

    def _host_filters(self, d: desired_.Desired) -> None:
        """Each host's tables (firewall.host_rules): its guests' ports' security groups,
        anti-spoofing and QoS, where no guest reaches them."""
        if not self.wire.plan:
            return
        by_host: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        qos: dict[str, list[str]] = {}
        for server in d.servers.values():
            if server["state"] == "off":
                continue
            for port in d.by_device.get(server["id"], []):
                placed = self.wire.place(port["id"]) if \
                    port["device_owner"].startswith("compute:") else None
                if placed is None:
                    continue
                tap = self.names.tap(port["id"])
                by_host.setdefault(placed[0], []).append((tap, port))
                mtu = d.networks.get(port["network_id"], {}).get("mtu") or 1500
                statements = qos_.sends(self.extras.qos.get(port["id"], []), mtu)
                if statements:
                    qos[tap] = statements
        for host_ns in sorted(self.wire.plan._host_by_ns):
            bridges = {name for name, link in self.wire._links(host_ns).items()
                       if link.get("kind") == "bridge"} if host_ns in self._present else set()
            ruleset = firewall.host_rules(self.names.prefix, by_host.get(host_ns, []), bridges,
                                          d.security_groups, self._members, qos)
            # (one host's table of 50 ports takes ~0.1 s to commit: the hosts' at once)
            self._jobs.add(f"filters {host_ns}", lambda ns=host_ns, text=ruleset:
                           self._nft_apply(ns, text))
        self._jobs.wait()

    def _boundary_faults(self, d: desired_.Desired, running: dict[str, str]) -> None:
        """A guest whose init found its boundary not as meant never runs: its server goes
        to ERROR with a fault (boundary.py). (`running`: the pass's look at the guests; one
        that stopped at its check was not running then, nor booted again since.)"""
        for server in d.servers.values():
            if server["state"] != "off" and server["id"] not in running \
                    and self.guests.boundary_failed(server["id"]):
                message = ("The guest's isolation from the machine was not what was meant "
                           "(its capabilities, seccomp filter or user namespace); it was "
                           "stopped before it ran anything. See its console log.")

                def fail(server_id: str = server["id"], message: str = message) -> None:
                    with self.database.transaction() as db:
                        compute.fail_server(db, server_id, message)

                self._try(f"guest {server['id']} fault", fail)

    def _guest(self, d: desired_.Desired, fabric: kernel.Ns, bridges: dict[str, str],
               keep_links: set[str], server: dict[str, Any], ns: str,
               running: dict[str, str], members: dict[str, dict[str, set[str]]]) -> None:
        ports = [p for p in d.by_device.get(server["id"], [])
                 if p["device_owner"].startswith("compute:") and p["network_id"] in bridges
                 and self.wire.place(p["id"]) is not None]  # cut ports: topology.plan says why
        places = [self.wire.place(p["id"]) or ("", "") for p in ports]
        nics = tuple((p["id"], p["mac_address"], d.networks[p["network_id"]].get("mtu") or 1500)
                     for p in ports)
        spec = GuestSpec(server["id"], server["hostname"] or server["name"],
                         server.get("os_admin_user") or DEFAULT_USER, nics, server["boots"],
                         server.get("memory_mb") or 512, server.get("vcpus") or 1,
                         tuple(p["id"] for p in ports if self._served_by_dhcp(d, p)),
                         _image_of(server),
                         f"{server.get('image_ref') or ''}:{server.get('rebuilds', 0)}",
                         disk_gb(server))
        if server["id"] not in running and self.guests.boundary_failed(server["id"]):
            return  # (its fault is recorded: _boundary_faults)
        boot = running.get(server["id"]) != spec.token() or ns not in self._present
        unfiltered = sorted({p[0] for p in places if f"filters {p[0]}" in self.failures})
        if unfiltered:  # never plugged or booted without its security groups
            self.failures[f"guest {server['id']}"] = f"the filter of {unfiltered[0]} failed"
            for place, port in zip(places, ports, strict=True):  # (what runs stays plugged)
                self.wire.keep.setdefault(place[0], set()).add(self.names.tap(port["id"]))
            return
        unplaced = [p["id"] for p in d.by_device.get(server["id"], [])
                    if p["device_owner"].startswith("compute:") and p not in ports]
        # a boot waits (within BOOT_HOLD) for its ports to be placed and their networks'
        # DHCP servers to be up: a guest booted before them has no address, key or user data
        waits = self._boot_waits(d, ports, unplaced, spec) if boot else []
        if waits:
            held = self._held.setdefault(server["id"], time.monotonic())
            if time.monotonic() - held < BOOT_HOLD:
                self.failures[f"guest {server['id']}"] = f"its boot waits for {waits[0]}"
                return
        self._held.pop(server["id"], None)
        ifnames = self.guests.nic_names(server["id"], [p["id"] for p in ports], fresh=boot)
        allowed = conntrack.allowances([(ifnames[p["id"]], p) for p in ports],
                                       d.security_groups, members)
        taps = [self.names.tap(p["id"]) for p in ports]
        disks = volumes_.wanted(d.volumes.get(server["id"], []))
        fingerprint = (spec.token(), tuple(taps), tuple(places), server["state"], allowed,
                       tuple(disks), tuple(volumes_.file_size(d.path) for d in disks))
        if boot:
            # a boot is a fresh machine: its namespaces made anew, each NIC plugged with its
            # port's MAC and MTU (one request each, from a netlink socket of the job's own:
            # the pass's handles are not shared between threads), its filter already in its
            # host's table; done by a job thread (a namespace and its veths wait on the
            # kernel's locks: 100 of them serially were most of a restart's pass)
            if server["id"] in running or self.guests.powering_off(server["id"]):
                # a soft reboot, a rebuild, a resize...: asked first, as Nova's (the boot
                # comes in the pass after the guest is gone: not a failure retried every
                # 0.5 s for a minute; the power-off's end asks for that pass)
                if not server.get("hard_boot") and self._power_off(d, server, False):
                    return
                self.guests.stop(server["id"], forget=False)  # a HARD reboot: at once
                if self.guests.powering_off(server["id"]):  # (its waiter ends first)
                    self.failures[f"guest {server['id']}"] = "its power-off is ending"
                    return
            self.handles.drop(ns)
            self._applied.pop(server["id"], None)
            for i in range(len(ports)):
                self.wire.keep.setdefault(places[i][0], set()).add(taps[i])

            def boot_guest() -> None:
                self.guests.make_namespaces(server["id"], ns, self.names.fabric)
                for i, port in enumerate(ports):
                    with kernel.Ns(places[i][0]) as host:
                        host.add_veth_into(taps[i], ns, ifnames[port["id"]], bridge=places[i][1],
                                           mac=port["mac_address"], mtu=nics[i][2])
                self._allowed[server["id"]] = allowed
                try:
                    root = self._image_root(spec)
                except images.ImageError as exc:
                    self._image_fault(server["id"], str(exc))
                    return
                seed = config_drive(server, ports, d) if server.get("config_drive") else None
                self.volumes.release_server(server["id"], {disk.volume_id for disk in disks})
                self.guests.start(spec, ns, root, seed,
                                  self.volumes.boot_list(server["id"], disks))
                self._applied[server["id"]] = fingerprint
                self._booted(server)

            self._jobs.add(f"guest {server['id']}", boot_guest)
            return
        host_ns = self.names.host(server["host"])
        if host_ns in self._present and set(taps) <= set(self.wire._links(host_ns)) \
                and self._applied.get(server["id"]) == fingerprint:
            # unchanged since the last pass that checked it all
            self.wire.keep.setdefault(host_ns, set()).update(taps)
            return
        self._applied.pop(server["id"], None)
        # a running guest: its NICs are judged by their host ends only (inside, its network
        # stack is the guest's own: a NIC it renamed or took down is its business, as a
        # VM's); a port attached since is plugged (a hot-plug), one detached unplugged
        plugged = False
        for i, port in enumerate(ports):
            made = self._try(f"port {port['id']}", self._plug_guest, d, port, places[i], ns,
                             ifnames[port["id"]], nics[i][2], server["state"] != "paused")
            plugged |= bool(made)
        for port_id in set(self.guests.plugged(server["id"])) - {p["id"] for p in ports}:
            tap = self.names.tap(port_id)
            for other in sorted(self.wire.plan._host_by_ns if self.wire.plan else ()):
                if tap in self.wire._links(other):
                    self._try(f"port {port_id} unplug", self.handles.get(other).delete_link, tap)
                    self.wire.seen.pop(other, None)
        self.guests.set_plugged(server["id"], [p["id"] for p in ports])

        def finish() -> None:  # waits on the kernel, not the CPU
            # what the rules no longer allow is cut off, established or not (conntrack.py)
            removed = self._allowed.get(server["id"], allowed) - allowed
            if removed:
                for place in sorted({p[0] for p in places}):
                    conntrack.flush(place, removed)
            self._allowed[server["id"]] = allowed
            if plugged:
                self.guests.hotplug(server["id"])
            self._try(f"volumes {server['id']}", self._disks, server["id"], disks)
            paused = server["state"] == "paused"
            if self.guests.frozen(server["id"]) != paused:
                self.guests.pause(server["id"], paused)
            if f"guest {server['id']}" not in self.failures and not any(
                    f"port {p['id']}" in self.failures for p in ports):
                self._applied[server["id"]] = fingerprint
            self._booted(server)  # (level-triggered: a start whose write was lost)

        self._jobs.add(f"guest {server['id']}", finish)

    def _booted(self, server: dict[str, Any]) -> None:
        """A reboot's or a start's server is ACTIVE once its guest's new boot has started
        (not before: a client that waits for ACTIVE then logs in reaches the new boot)."""
        if server.get("task_state") not in compute.BOOTING_TASKS:
            return

        def write() -> None:
            with self.database.transaction() as db:
                compute.guest_booted(db, server["id"], server["boots"])

        self._try(f"guest {server['id']} booted", write)

    def _disks(self, server_id: str, disks: list[volumes_.Disk]) -> None:
        """A running guest's volumes hot-plugged or unplugged (its /dev, then the loop
        devices of those detached)."""
        pid = self.guests.inside(server_id)
        if pid is None:
            raise RuntimeError("the guest is not up yet: its volumes wait")
        # (the mount supervisor's list first: it mounts only what the list names)
        listed = self.guests.gdir(server_id) / "disks"
        text = self.volumes.boot_list(server_id, disks)
        if not listed.exists() or listed.read_text() != text:
            tmp = listed.with_name("disks.tmp")
            tmp.write_text(text)
            tmp.replace(listed)
        self.volumes.sync(server_id, pid, self.guests.ids.claim(server_id), disks)
        self.volumes.release_server(server_id, {disk.volume_id for disk in disks})

    def _boot_waits(self, d: desired_.Desired, ports: list[dict[str, Any]], unplaced: list[str],
                    spec: GuestSpec) -> list[str]:
        """What a boot waits for: its ports placed, their networks' DHCP servers up."""
        waits = [f"port {unplaced[0]} to be placed on the wire"] if unplaced else []
        return waits + [
            f"the DHCP server of network {p['network_id']}" for p in ports
            if p["id"] in spec.dhcp4 and (not self.dhcp.serving(p["network_id"]) or any(
                k.startswith((f"dnsmasq {p['network_id']}", f"dhcp {p['network_id']}",
                              f"dhcp port {p['network_id']}")) for k in self.failures))]

    @staticmethod
    def _served_by_dhcp(d: desired_.Desired, port: dict[str, Any]) -> bool:
        """Whether a DHCPv4 server of ours serves the port's address (its boot asks until
        it answers): a DHCP subnet of a network that is not external (an external one has
        no DHCP namespace here)."""
        if d.networks[port["network_id"]].get("router:external"):
            return False
        mine = {s for s, _ in d.ipv4(port)}
        return any(s["id"] in mine for s in d.dhcp_subnets(port["network_id"]))

    def _plug_guest(self, d: desired_.Desired, port: dict[str, Any], place: tuple[str, str],
                    ns: str, inside: str, mtu: int, up: bool = True) -> bool:
        """A running guest's NIC, by its host end: moved here from another host (a live
        migration: the guest's side never changes), kept (master, MTU, up: the host's side
        only; down while the server is paused, so that nothing of it answers, its kernel's
        own ICMP included, as a paused VM's vCPUs do not), or plugged anew when its tap is
        gone (True: the guest is told)."""
        host_ns, bridge = place
        tap = self.names.tap(port["id"])
        self.wire.keep.setdefault(host_ns, set()).add(tap)
        moved = self.wire.adopt(tap, host_ns)
        host = self.handles.get(host_ns)
        link = self.wire._links(host_ns).get(tap)
        if link is None:
            host.add_veth_into(tap, ns, inside, bridge=bridge, mac=port["mac_address"], mtu=mtu)
            self.wire.seen.pop(host_ns, None)
            return True
        master = self.wire._links(host_ns).get(bridge, {}).get("index")
        if link.get("master") != master or link.get("mtu") != mtu or link.get("up") != up:
            host.ip.link("set", index=link["index"], master=master, mtu=mtu,
                         state="up" if up else "down")
            self.wire.seen.pop(host_ns, None)
        if moved:
            kernel.announce(ns, inside, [ip for _, ip in d.ipv4(port)])
        return False

    # ------------------------------------------------------------------ teardown
    def teardown(self) -> None:
        """Remove every kernel object and process of this cloud (`dataplane down`, a clean
        stop): guests, dnsmasq, metadata sockets, namespaces (their links go with them)."""
        self.snapshots.stop()
        self.metadata.stop_all()
        self.handles.close_all()
        self._applied.clear()
        self.guests.stop_all()
        # (root disks' loop devices clear as the guests' last processes go: their filesystems
        # flushed; the images' mounts are let go after that)
        self.guests.disks.wait_released(timeout=10)
        self.volumes.release_all()
        images.cleanup_all(self.images_dir, keep_files=True)  # (converted disks are kept)
        kernel.unmount(str(self.run_dir / "rootfs"))
        for net_id in self.dhcp.known():
            self.dhcp.stop(net_id)
        for router_id in self.radvd.known():
            self.radvd.stop(router_id)
        for name in kernel.list_namespaces(self.names.prefix):
            kernel.remove_namespace(name)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        self._nft.clear()
