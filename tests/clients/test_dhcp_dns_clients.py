"""Extra DHCP options and DNS attributes through the real clients: openstacksdk on every
backend (port create/update with options and a dns_name, a network's dns_domain) and the
`openstack port create/set --extra-dhcp-option --dns-name --dns-domain` commands on
SQLite."""

from __future__ import annotations

import uuid

from tests.conftest import sqlite_only


def _net(conn):
    net = conn.network.create_network(name=f"dns-{uuid.uuid4().hex[:6]}", dns_domain="corp.test.")
    conn.network.create_subnet(network_id=net.id, ip_version=4,
                               cidr=f"10.140.{uuid.uuid4().int % 250}.0/24")
    return net


def test_sdk_extra_dhcp_opts_and_dns(cloud):
    conn = cloud.new_project_member()["sdk"]
    net = _net(conn)
    assert conn.network.get_network(net.id).dns_domain == "corp.test."
    port = conn.network.create_port(network_id=net.id, dns_name="app-1", extra_dhcp_opts=[
        {"opt_name": "bootfile-name", "opt_value": "pxelinux.0"},
        {"opt_name": "tftp-server", "opt_value": "10.0.0.9"}])
    assert port.dns_name == "app-1"
    ip = port.fixed_ips[0]["ip_address"]
    assert port.dns_assignment == [{"hostname": "host-" + ip.replace(".", "-"),
                                    "ip_address": ip,
                                    "fqdn": "host-" + ip.replace(".", "-") + ".openstacklocal."}]
    assert sorted(o["opt_name"] for o in port.extra_dhcp_opts) == ["bootfile-name",
                                                                  "tftp-server"]
    port = conn.network.update_port(port, dns_name="app-2", extra_dhcp_opts=[
        {"opt_name": "tftp-server", "opt_value": None}])
    assert port.dns_name == "app-2"
    assert [o["opt_name"] for o in conn.network.get_port(port.id).extra_dhcp_opts] == [
        "bootfile-name"]


@sqlite_only
def test_cli_port_dhcp_and_dns_options(cloud):
    conn = cloud.sdk()
    net = _net(conn)
    name = f"p-{uuid.uuid4().hex[:6]}"
    made = cloud.cli("port", "create", "--network", net.id, "--dns-name", "cli-host",
                     "--dns-domain", "example.test.", "--extra-dhcp-option",
                     "name=bootfile-name,value=ipxe.efi,ip-version=4", name, "-f", "json")
    assert made["dns_name"] == "cli-host" and made["dns_domain"] == "example.test."
    assert made["extra_dhcp_opts"][0]["opt_value"] == "ipxe.efi"
    cloud.cli("port", "set", "--extra-dhcp-option", "name=tftp-server,value=10.0.0.5",
              "--dns-name", "cli-host2", name, parse=False)
    shown = cloud.cli("port", "show", name, "-f", "json")
    assert shown["dns_name"] == "cli-host2"
    assert sorted(o["opt_name"] for o in shown["extra_dhcp_opts"]) == ["bootfile-name",
                                                                      "tftp-server"]
    assert shown["dns_assignment"][0]["fqdn"].endswith(".openstacklocal.")
    network = cloud.cli("network", "show", net.id, "-f", "json")
    assert network["dns_domain"] == "corp.test."
