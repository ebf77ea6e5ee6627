"""Floating IP port forwardings through the real clients: openstacksdk on every backend
(create, list, update, delete; the duplicate, foreign-address and associated-IP refusals)
and `openstack floating ip port forwarding ...` on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _behind_router(conn, cidr: str):
    """A network behind a router to `public`, a port on it and a floating IP."""
    public = conn.network.find_network("public", ignore_missing=False)
    net = conn.network.create_network(name=_name("pfn"))
    subnet = conn.network.create_subnet(network_id=net.id, cidr=cidr, ip_version=4)
    router = conn.network.create_router(name=_name("pfr"),
                                        external_gateway_info={"network_id": public.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    port = conn.network.create_port(network_id=net.id)
    fip = conn.network.create_ip(floating_network_id=public.id)
    return router, port, fip


def test_sdk_port_forwardings(cloud):
    conn = cloud.new_project_member()["sdk"]
    router, port, fip = _behind_router(conn, "10.171.0.0/24")
    address = port.fixed_ips[0]["ip_address"]
    pf = conn.network.create_floating_ip_port_forwarding(
        fip, protocol="tcp", internal_port_id=port.id, internal_ip_address=address,
        internal_port=22, external_port=2022, description="ssh")
    assert pf.external_port == 2022 and pf.description == "ssh"
    assert conn.network.get_ip(fip.id).router_id == router.id
    with pytest.raises(exceptions.BadRequestException):  # the same external port
        conn.network.create_floating_ip_port_forwarding(
            fip, protocol="tcp", internal_port_id=port.id, internal_ip_address=address,
            internal_port=80, external_port=2022)
    with pytest.raises(exceptions.BadRequestException):  # not the port's address
        conn.network.create_floating_ip_port_forwarding(
            fip, protocol="tcp", internal_port_id=port.id,
            internal_ip_address="10.171.0.251" if address == "10.171.0.250" else "10.171.0.250",
            internal_port=80, external_port=80)
    with pytest.raises(exceptions.ConflictException):  # forwarding IPs take no port
        conn.network.update_ip(fip, port_id=port.id)
    pf = conn.network.update_floating_ip_port_forwarding(fip, pf, external_port=2200)
    assert pf.external_port == 2200
    assert [p.id for p in conn.network.floating_ip_port_forwardings(fip)] == [pf.id]
    conn.network.delete_floating_ip_port_forwarding(fip, pf)
    assert list(conn.network.floating_ip_port_forwardings(fip)) == []
    assert conn.network.get_ip(fip.id).router_id is None
    conn.network.update_ip(fip, port_id=port.id)
    with pytest.raises(exceptions.ConflictException):  # an associated floating IP
        conn.network.create_floating_ip_port_forwarding(
            fip, protocol="udp", internal_port_id=port.id, internal_ip_address=address,
            internal_port=53, external_port=53)


@sqlite_only
def test_cli_port_forwardings(cloud):
    conn = cloud.sdk()
    _router, port, fip = _behind_router(conn, "10.172.0.0/24")
    address = port.fixed_ips[0]["ip_address"]
    made = cloud.cli("floating", "ip", "port", "forwarding", "create", "--port", port.id,
                     "--internal-ip-address", address, "--internal-protocol-port", "80",
                     "--external-protocol-port", "8080", "--protocol", "tcp",
                     "--description", "web", fip.floating_ip_address, "-f", "json")
    assert made["external_port"] == 8080
    listed = cloud.cli("floating", "ip", "port", "forwarding", "list",
                       fip.floating_ip_address, "-f", "json")
    assert [p["ID"] for p in listed] == [made["id"]]
    cloud.cli("floating", "ip", "port", "forwarding", "set", "--external-protocol-port",
              "8081", fip.floating_ip_address, made["id"], parse=False)
    shown = cloud.cli("floating", "ip", "port", "forwarding", "show",
                      fip.floating_ip_address, made["id"], "-f", "json")
    assert shown["external_port"] == 8081
    cloud.cli("floating", "ip", "port", "forwarding", "delete", fip.floating_ip_address,
              made["id"], parse=False)
    assert cloud.cli("floating", "ip", "port", "forwarding", "list",
                     fip.floating_ip_address, "-f", "json") == []
