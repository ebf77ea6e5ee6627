"""Netlink through pyroute2: a cloud's namespaces, bridges, veths, addresses and routes.

Every call is idempotent (ensure_*: make it so whatever is there), so a pass of the
reconciler after a crash, or twice in a row, converges on the same kernel state.
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pyroute2 import IPRoute, netns
from pyroute2.netlink.exceptions import NetlinkError

T = TypeVar("T")
EEXIST, ENOENT, ENODEV, ESRCH, EADDRNOTAVAIL = 17, 2, 19, 3, 99
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def list_namespaces(prefix: str) -> list[str]:
    return sorted(n for n in netns.listnetns() if n.startswith(prefix + "-"))


# The socket hash tables of the namespaces made from one of ours: each its own and small,
# not the machine's (sized for its memory): a guest's SSH server reads /proc/net/tcp to seed
# its random numbers, and with the shared table that walked every bucket of the machine's.
CHILD_HASHES = {"tcp_child_ehash_entries": "256", "udp_child_hash_entries": "256"}


def ensure_namespace(name: str, ipv6: bool = True, parent: str | None = None) -> bool:
    """True when it was made now (whatever was known of it before is gone). Made from
    `parent` (one of ours) when given, so that its socket tables are its own."""
    if name in netns.listnetns():
        return False
    try:
        _create_namespace(name, ipv6, parent)
    except FileExistsError:
        return False
    return True


def _create_namespace(name: str, ipv6: bool = True, parent: str | None = None) -> None:
    """A named network namespace with its loopback up, made by a thread of ours that
    enters a new one and binds it under /run/netns (iproute2's way, without forking: a
    fork of a large process costs more than the rest of a guest's plugging). Without
    `ipv6`, its links are made with IPv6 off: a switch's hundreds of ports otherwise each
    run duplicate address detection and MLD reports, flooded to every guest on the bridge
    (most of the kernel's work when a start plugs 100 guests at once)."""

    def make() -> None:
        if parent is not None:  # (this thread's only: a network namespace is per thread)
            try:
                fd = os.open(f"/run/netns/{parent}", os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                fd = -1  # not made yet: from the machine's, with its shared tables
            if fd >= 0:
                try:
                    if _libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), f"setns({parent}) failed")
                finally:
                    os.close(fd)
        if _libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
        for key, value in CHILD_HASHES.items():  # (this thread's /proc/sys/net is the new one's)
            try:
                with open(f"/proc/sys/net/ipv4/{key}", "w") as f:
                    f.write(value)
            except OSError:
                pass  # a kernel before 6.1 (TCP) or 6.2 (UDP): the shared table it is
        if not ipv6:
            for scope in ("default", "all"):
                with open(f"/proc/sys/net/ipv6/conf/{scope}/disable_ipv6", "w") as f:
                    f.write("1")
        netns.attach(name, f"self/task/{threading.get_native_id()}")
        with IPRoute() as ip:
            ip.link("set", index=1, state="up")  # a new namespace's first link is its lo

    result: dict[str, BaseException] = {}

    def run() -> None:
        try:
            make()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["error"] = exc

    thread = threading.Thread(target=run, name=f"netns-{name}")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]


def remove_namespace(name: str) -> None:
    """Its links go with it (the kernel deletes a namespace's veths and bridges)."""
    try:
        netns.remove(name)
    except (FileNotFoundError, OSError):
        pass


MS_BIND, MNT_DETACH, EINVAL = 4096, 2, 22


def bind_mount(source: str, target: str) -> None:
    if _libc.mount(source.encode(), target.encode(), None, MS_BIND, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount --bind {source} {target}: {os.strerror(err)}")


def unmount(target: str) -> None:
    """Lazily; nothing there (not a mount point, or gone) is no error."""
    if _libc.umount2(target.encode(), MNT_DETACH) != 0 and \
            ctypes.get_errno() not in (EINVAL, ENOENT):
        err = ctypes.get_errno()
        raise OSError(err, f"umount {target}: {os.strerror(err)}")


def in_namespace(name: str, fn: Callable[[], T]) -> T:
    """Run fn in a thread that entered the namespace (a socket made there stays there)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            netns.setns(name)
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["error"] = exc

    thread = threading.Thread(target=run, name=f"in-{name}")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def listen_tcp(namespace: str, address: str, port: int, ifname: str | None = None
               ) -> socket.socket:
    """A listening socket in the namespace; an IPv6 one (a link-local address) is bound
    to `ifname`'s scope."""
    def make() -> socket.socket:
        v6 = ":" in address
        sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if v6:
            sock.bind((address, port, 0, socket.if_nametoindex(ifname or "lo")))
        else:
            sock.bind((address, port))
        sock.listen(64)
        return sock

    return in_namespace(namespace, make)


def _route_socket_fd() -> int:
    return socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, socket.NETLINK_ROUTE).detach()


class Ns:
    """One namespace's netlink socket, with the few idempotent operations we need."""

    def __init__(self, name: str) -> None:
        self.name = name
        # the socket is made by a thread inside the namespace (pyroute2's NetNS forks a
        # child for it: ~6 ms a handle, most of adopting 100 guests after a restart)
        self.ip = IPRoute(fileno=in_namespace(name, _route_socket_fd))

    def close(self) -> None:
        self.ip.close()

    def __enter__(self) -> Ns:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def index(self, ifname: str) -> int | None:
        found = self.ip.link_lookup(ifname=ifname)
        return found[0] if found else None

    def links(self) -> dict[str, dict[str, Any]]:
        out = {}
        for link in self.ip.get_links():
            info = link.get("IFLA_LINKINFO")
            out[link.get("ifname")] = {
                "index": link["index"], "mtu": link.get("mtu"),
                "master": link.get("master"), "address": link.get("address"),
                "kind": info.get("IFLA_INFO_KIND") if info else None,
                "up": bool(link["flags"] & 1)}
        return out

    def ensure_bridge(self, name: str, mtu: int) -> int:
        idx = self.index(name)
        if idx is None:
            self.ip.link("add", ifname=name, kind="bridge", br_stp_state=0, br_forward_delay=0)
            idx = self.index(name)
        self.ip.link("set", index=idx, mtu=mtu, state="up")
        return idx  # type: ignore[return-value]

    def add_veth_into(self, local: str, target_ns: str, final: str, *, bridge: str, mac: str,
                      mtu: int) -> None:
        """A new veth straight into a new namespace (one request, no handle there): `local`
        on `bridge` here, `final` there with the MAC and MTU (its owner brings it up)."""
        self.delete_link(local)
        self.ip.link("add", ifname=local, kind="veth",
                     peer={"ifname": final, "net_ns_fd": target_ns, "address": mac, "mtu": mtu})
        self.ip.link("set", index=self.index(local), master=self.index(bridge), mtu=mtu,
                     state="up")

    def delete_link(self, name: str) -> None:
        idx = self.index(name)
        if idx is not None:
            try:
                self.ip.link("del", index=idx)
            except NetlinkError as exc:
                if exc.code not in (ENODEV, ENOENT):
                    raise

    def ensure_veth_into(self, local: str, peer: str, other: Ns, final: str, *,
                         bridge: str | None, mac: str | None, mtu: int) -> None:
        """A veth whose `local` end stays here (on `bridge`) and whose other end is
        `final` inside `other`, with the port's MAC and the network's MTU."""
        target_ns = other.name
        inside = other.index(final)
        created = False
        if self.index(local) is None or inside is None:
            created = True
            self.delete_link(local)
            other.delete_link(final)
            self.delete_link(peer)
            self.ip.link("add", ifname=local, kind="veth", peer={"ifname": peer})
            self.ip.link("set", index=self.index(peer), net_ns_fd=target_ns)
            inside = other.index(peer)
            other.ip.link("set", index=inside, ifname=final)
        if created and mac:  # the MAC is set when plugged; later it is the guest's
            other.ip.link("set", index=inside, address=mac)
        current = other.links().get(final, {})
        if current.get("mtu") != mtu or not current.get("up"):
            other.ip.link("set", index=inside, mtu=mtu, state="up")
        idx = self.index(local)
        master = self.ip.link("get", index=idx)[0].get("master") if bridge else None
        values = {"mtu": mtu, "state": "up"}
        if bridge and master != self.index(bridge):
            values["master"] = self.index(bridge)
        self.ip.link("set", index=idx, **values)

    def ensure_addresses(self, ifname: str, cidrs: list[str]) -> None:
        """Exactly these IPv4 addresses on the link (others removed)."""
        idx = self.index(ifname)
        have = {f"{a.get('address')}/{a['prefixlen']}"
                for a in self.ip.get_addr(index=idx, family=socket.AF_INET)}
        for cidr in set(cidrs) - have:
            address, plen = cidr.split("/")
            try:
                self.ip.addr("add", index=idx, address=address, prefixlen=int(plen))
            except NetlinkError as exc:
                if exc.code != EEXIST:
                    raise
        for cidr in have - set(cidrs):
            address, plen = cidr.split("/")
            try:
                self.ip.addr("del", index=idx, address=address, prefixlen=int(plen))
            except NetlinkError as exc:
                if exc.code != EADDRNOTAVAIL:
                    raise

    def ensure_routes(self, routes: dict[str, str]) -> None:
        """Exactly these gateway routes (destination -> next hop) in the main table; the
        links' own connected routes are the kernel's."""
        have = {}
        for r in self.ip.get_routes(family=socket.AF_INET, table=254):
            gw = r.get("RTA_GATEWAY")
            if gw:
                dst = r.get("RTA_DST") or "0.0.0.0"
                have[f"{dst}/{r['dst_len']}"] = gw
        for dst, gw in routes.items():
            if have.get(dst) != gw:
                self.ip.route("replace", dst=dst, gateway=gw)
        for dst in set(have) - set(routes):
            try:
                self.ip.route("del", dst=dst, gateway=have[dst])
            except NetlinkError:
                pass

    def sysctl(self, key: str, value: str) -> None:
        path = "/proc/sys/" + key.replace(".", "/")

        def write() -> None:
            with open(path, "w") as fh:
                fh.write(value)

        # /proc/sys/net shows the namespace of the thread that opens it
        in_namespace(self.name, write)

    # ------------------------------------------------------------------ the wire
    def ensure_pair(self, local: str, other: Ns, remote: str, *, mtu: int,
                    master: str | None = None, remote_master: str | None = None,
                    have: dict[str, dict[str, Any]] | None = None,
                    other_have: dict[str, dict[str, Any]] | None = None) -> bool:
        """A veth between two namespaces of ours (a cable): `local` here on `master`,
        `remote` there on `remote_master`, both up at `mtu`. True when it was made now.
        `have`/`other_have` are the namespaces' links read this pass (saves two dumps)."""
        have = self.links() if have is None else have
        other_have = other.links() if other_have is None else other_have
        made = local not in have or remote not in other_have
        if made:
            self.delete_link(local)
            other.delete_link(remote)
            self.ip.link("add", ifname=local, kind="veth", mtu=mtu,
                         peer={"ifname": remote, "net_ns_fd": other.name, "mtu": mtu})
        for ns, name, bridge, seen in ((self, local, master, have),
                                       (other, remote, remote_master, other_have)):
            cur = {} if made else seen.get(name, {})
            known = seen.get(bridge or "", {}).get("index")  # the bridge's, read this pass
            want_master = (known or ns.index(bridge)) if bridge else None
            values: dict[str, Any] = {}
            if cur.get("mtu") != mtu:
                values["mtu"] = mtu
            if not cur.get("up"):
                values["state"] = "up"
            if bridge and cur.get("master") != want_master:
                values["master"] = want_master
            if values:
                ns.ip.link("set", index=ns.index(name), **values)
        return made

    def ensure_vxlan(self, name: str, vni: int, local_ip: str, port: int, *, bridge: str,
                     mtu: int, have: dict[str, dict[str, Any]] | None = None) -> bool:
        """A VXLAN device (learning, no multicast: head-end replication by `ensure_flood`)
        on `bridge`. True when it was made now (its flood list is empty then)."""
        have = self.links() if have is None else have
        made = name not in have
        if made:
            self.ip.link("add", ifname=name, kind="vxlan", vxlan_id=vni, vxlan_local=local_ip,
                         vxlan_port=port, vxlan_learning=1, mtu=mtu)
        cur = {} if made else have[name]
        idx = self.index(name)
        if cur.get("master") != self.index(bridge) or not cur.get("up") or cur.get("mtu") != mtu:
            self.ip.link("set", index=idx, master=self.index(bridge), mtu=mtu, state="up")
        return made

    def ensure_flood(self, name: str, remotes: set[str], known: set[str] | None) -> set[str]:
        """Head-end replication: an all-zero FDB entry per remote VTEP (the kernel floods
        BUM traffic to each). `known` is what was written before (None: read it from the
        kernel, as after a restart); returns the new set."""
        idx = self.index(name)
        if known is None:
            known = {m.get("NDA_DST") for m in self.ip.fdb("dump", ifindex=idx)
                     if m["ifindex"] == idx and m.get("NDA_LLADDR") == "00:00:00:00:00:00"
                     and m.get("NDA_DST")}
        for dst in sorted(remotes - known):
            try:
                self.ip.fdb("append", ifindex=idx, lladdr="00:00:00:00:00:00", dst=dst)
            except NetlinkError as exc:
                if exc.code != EEXIST:
                    raise
        for dst in sorted(known - remotes):
            try:
                self.ip.fdb("del", ifindex=idx, lladdr="00:00:00:00:00:00", dst=dst)
            except NetlinkError:
                pass
        return set(remotes)

    def move_link(self, name: str, target: str) -> None:
        """Move a link (a guest's tap) into another namespace of ours; its peer stays
        where it is (the guest keeps its NIC, its addresses and its connections)."""
        self.ip.link("set", index=self.index(name), net_ns_fd=target)


def announce(namespace: str, ifname: str, addresses: list[str]) -> None:
    """Gratuitous ARP from a NIC (what a hypervisor sends for a guest after a live
    migration), so the switches learn where its MAC is now."""

    def send() -> None:
        with IPRoute() as ip:
            found = ip.link_lookup(ifname=ifname)
            if not found:
                return
            mac = bytes.fromhex(ip.get_links(found[0])[0].get("address").replace(":", ""))
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
            sock.bind((ifname, 0))
            for address in addresses:
                ip4 = socket.inet_aton(address)
                arp = (b"\x00\x01\x08\x00\x06\x04\x00\x02" + mac + ip4 + b"\xff" * 6 + ip4)
                sock.send(b"\xff" * 6 + mac + b"\x08\x06" + arp)

    in_namespace(namespace, send)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Handles:
    """Open netlink handles by namespace, kept across passes (opening one costs a few ms).
    A handle keeps its namespace alive, so it is closed before the namespace is removed,
    and dropped when the namespace vanished by other hands."""

    def __init__(self) -> None:
        self.open: dict[str, Ns] = {}

    def get(self, name: str) -> Ns:
        handle = self.open.get(name)
        if handle is None:
            handle = self.open[name] = Ns(name)
        return handle

    def drop(self, name: str) -> None:
        handle = self.open.pop(name, None)
        if handle is not None:
            handle.close()

    def prune(self, present: set[str]) -> None:
        for name in set(self.open) - present:
            self.drop(name)

    def close_all(self) -> None:
        for name in list(self.open):
            self.drop(name)
