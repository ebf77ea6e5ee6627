"""The metadata service at 169.254.169.254, as Nova's: `openstack/latest/{meta_data.json,
network_data.json,user_data}` and the EC2-style `latest/meta-data/...` and `latest/user-data`.

It listens inside each network's DHCP namespace (the route to 169.254.169.254 that DHCP
hands out points there), so a request's network is the socket it came in on and its
source address names the port, hence the one server it answers for, as Neutron's
metadata proxy tags each request with its network for Nova. On a network with IPv6 subnets
it also listens at fe80::a9fe:a9fe on the DHCP port's link, as Neutron's DHCP agent does
since Wallaby, so a guest with no IPv4 gets its key too; it asks from its link-local address,
the EUI-64 of its port's MAC (which anti-spoofing holds it to).
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOG = logging.getLogger(__name__)

METADATA_IPV6 = "fe80::a9fe:a9fe"
# (network id, source address) -> what the server's metadata says, or None
Lookup = Callable[[str, str], dict[str, Any] | None]


def documents(server: dict[str, Any], ports: list[dict[str, Any]],
              subnets: dict[str, dict[str, Any]], networks: dict[str, dict[str, Any]]
              ) -> dict[str, bytes | str]:
    """Every path this server's guest may ask for, and its body."""
    hostname = server["hostname"] or server["name"]
    keys = {}
    if server.get("key_data"):
        keys = {server.get("key_name") or "key": server["key_data"]}
    meta = {"uuid": server["id"], "name": server["name"], "hostname": hostname,
            "availability_zone": server.get("availability_zone"),
            "project_id": server["project_id"], "launch_index": 0,
            "meta": server.get("metadata") or {},
            "public_keys": keys,
            "keys": [{"name": n, "type": "ssh", "data": k} for n, k in keys.items()],
            "devices": []}
    links, nets = [], []
    for i, port in enumerate(ports):
        tap = "tap" + port["id"][:11]
        net = networks.get(port["network_id"], {})
        links.append({"id": tap, "vif_id": port["id"], "type": "ovs",
                      "mtu": net.get("mtu"), "ethernet_mac_address": port["mac_address"]})
        for j, ip in enumerate(port["fixed_ips"]):
            subnet = subnets.get(ip["subnet_id"])
            if subnet is None:
                continue
            v6 = subnet["ip_version"] == 6
            routes = [{"network": "::" if v6 else "0.0.0.0", "netmask": "::" if v6 else "0.0.0.0",
                       "gateway": subnet["gateway_ip"]}] if subnet.get("gateway_ip") else []
            kind = "ipv6_dhcp" if v6 else "ipv4_dhcp"
            if v6 and subnet.get("ipv6_address_mode"):  # as Nova names them: how cloud-init
                kind = f"ipv6_{subnet['ipv6_address_mode']}"  # configures the interface
            nets.append({"id": f"network{i}-{j}", "link": tap, "network_id": port["network_id"],
                         "type": kind, "ip_address": ip["ip_address"], "routes": routes,
                         "services": [{"type": "dns", "address": d}
                                      for d in subnet.get("dns_nameservers") or []]})
    network_data = {"links": links, "networks": nets, "services": []}
    out: dict[str, bytes | str] = {
        "openstack/latest/meta_data.json": json.dumps(meta),
        "openstack/latest/network_data.json": json.dumps(network_data),
        "openstack/latest/vendor_data.json": "{}",
        "openstack/latest/vendor_data2.json": "{}",
        "openstack/latest": "meta_data.json\nnetwork_data.json\nvendor_data.json\n"
                            "vendor_data2.json" + ("\nuser_data" if server.get("user_data") else ""),
        "openstack": "latest",
        "latest/meta-data/hostname": hostname,
        "latest/meta-data/local-hostname": hostname,
        "latest/meta-data/instance-id": server["id"],
        "latest/meta-data/local-ipv4": next(
            (ip["ip_address"] for p in ports for ip in p["fixed_ips"] if ":" not in ip["ip_address"]),
            ""),
        "latest/meta-data": "hostname\ninstance-id\nlocal-hostname\nlocal-ipv4"
                            + ("\npublic-keys/" if keys else ""),
    }
    if keys:
        name, key = next(iter(keys.items()))
        out["latest/meta-data/public-keys"] = f"0={name}"
        out["latest/meta-data/public-keys/0"] = "openssh-key"
        out["latest/meta-data/public-keys/0/openssh-key"] = key
    if server.get("user_data"):
        out["openstack/latest/user_data"] = server["user_data"]
        out["latest/user-data"] = server["user_data"]
    return out


class MetadataServers:
    """A listening socket per network and family (in its DHCP namespace), served by threads."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        # (network, IP version) -> its server and what its socket was bound to
        self.servers: dict[tuple[str, int], tuple[ThreadingHTTPServer, object]] = {}

    def networks(self) -> set[str]:
        return {network_id for network_id, _ in self.servers}

    def ensure(self, network_id: str, make_socket: Callable[[], socket.socket],
               version: int = 4, bound_to: object = None) -> None:
        """Listening, once; again when `bound_to` changed (an IPv6 socket is bound to its
        link's index, which a link plugged anew does not have)."""
        if (network_id, version) in self.servers:
            if self.servers[(network_id, version)][1] == bound_to:
                return
            self.stop(network_id, (version,))
        sock = make_socket()
        lookup = self.lookup

        class Handler(BaseHTTPRequestHandler):
            server_version = "stackling-metadata"

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                # an IPv6 peer is (address, port, flow, scope): the address without a zone
                docs = lookup(network_id, self.client_address[0].split("%", 1)[0])
                path = self.path.split("?", 1)[0].strip("/")
                body = docs.get(path) if docs is not None else None
                if body is None:
                    self.send_response(404 if docs is not None else 403)
                    body = b"404 Not Found" if docs is not None else b"403 Forbidden"
                else:
                    self.send_response(200)
                data = body.encode() if isinstance(body, str) else body
                ctype = "application/json" if path.endswith(".json") else "text/plain"
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, fmt: str, *args: Any) -> None:
                LOG.debug("metadata %s: " + fmt, network_id, *args)

        server = ThreadingHTTPServer(sock.getsockname(), Handler, bind_and_activate=False)
        server.socket.close()
        server.socket = sock
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name=f"metadata-{network_id[:8]}",
                         daemon=True).start()
        self.servers[(network_id, version)] = (server, bound_to)

    def stop(self, network_id: str, versions: tuple[int, ...] = (4, 6)) -> None:
        for version in versions:
            server, _ = self.servers.pop((network_id, version), (None, None))
            if server is not None:
                server.shutdown()
                server.server_close()

    def stop_all(self) -> None:
        for network_id in self.networks():
            self.stop(network_id)
