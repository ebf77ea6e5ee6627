"""Extra DHCP options and DNS attributes over the in-process app (`extra_dhcp_opt`,
`dns-integration`, `dns-domain-ports`): Neutron's validation, the merge on update, and
the hostnames and FQDNs of `dns_assignment` under the default and a configured domain."""

from __future__ import annotations

import shutil

import pytest

from tests.api.test_network import N, create, neutron_error
from tests.conftest import make_api


@pytest.fixture(scope="module")
def net(api) -> dict:
    net = create(api, "networks", "network", {"name": "dns-net"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                      "cidr": "10.61.0.0/24"}, user="demo")
    return net


def test_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"extra_dhcp_opt", "dns-integration", "dns-domain-ports"} <= aliases


def test_extra_dhcp_opts_create_merge_and_remove(api, net):
    opts = [{"opt_name": "bootfile-name", "opt_value": "pxelinux.0"},
            {"opt_name": "tftp-server", "opt_value": "10.61.0.9", "ip_version": 4},
            {"opt_name": "dns-server", "opt_value": "2001:db8::1", "ip_version": 6}]
    port = create(api, "ports", "port", {"network_id": net["id"], "extra_dhcp_opts": opts},
                  user="demo")
    got = sorted((o["opt_name"], o["opt_value"], o["ip_version"]) for o in port["extra_dhcp_opts"])
    assert got == [("bootfile-name", "pxelinux.0", 4), ("dns-server", "2001:db8::1", 6),
                   ("tftp-server", "10.61.0.9", 4)]
    url = f"{N}/ports/{port['id']}"
    # an update merges: a new value, a removal (null), the others kept
    r = api.put(url, user="demo", json={"port": {"extra_dhcp_opts": [
        {"opt_name": "bootfile-name", "opt_value": "grub.efi"},
        {"opt_name": "tftp-server", "opt_value": None},
        {"opt_name": "server-ip-address", "opt_value": "10.61.0.10"}]}})
    assert r.status_code == 200, r.text
    got = sorted((o["opt_name"], o["opt_value"]) for o in r.json()["port"]["extra_dhcp_opts"])
    assert got == [("bootfile-name", "grub.efi"), ("dns-server", "2001:db8::1"),
                   ("server-ip-address", "10.61.0.10")]
    assert api.get(url, user="demo").json()["port"]["extra_dhcp_opts"] == \
        r.json()["port"]["extra_dhcp_opts"]
    # a port without options shows an empty list
    bare = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    assert bare["extra_dhcp_opts"] == []


@pytest.mark.parametrize("opts", [
    "x", ["x"], [{"opt_value": "v"}], [{"opt_name": "n"}], [{"opt_name": "", "opt_value": "v"}],
    [{"opt_name": "n", "opt_value": ""}], [{"opt_name": "n", "opt_value": "v", "ip_version": 5}],
    [{"opt_name": "n", "opt_value": "v", "bogus": 1}], [{"opt_name": "n" * 65, "opt_value": "v"}],
])
def test_bad_extra_dhcp_opts_are_400(api, net, opts):
    r = api.post(f"{N}/ports", user="demo", json={"port": {"network_id": net["id"],
                                                          "extra_dhcp_opts": opts}})
    neutron_error(r, 400, "ExtraDhcpOptBadData")


def test_blank_value_allowed_for_router_option(api, net):
    port = create(api, "ports", "port", {"network_id": net["id"], "extra_dhcp_opts": [
        {"opt_name": "router", "opt_value": ""}]}, user="demo")
    assert port["extra_dhcp_opts"][0]["opt_value"] == ""


def test_default_domain_assignment_and_dns_attributes(api, net):
    port = create(api, "ports", "port", {"network_id": net["id"], "dns_name": "web-1",
                                         "dns_domain": "example.net."}, user="demo")
    ip = port["fixed_ips"][0]["ip_address"]
    host = "host-" + ip.replace(".", "-")
    # under the default domain the dns_name is stored but not the hostname (as upstream)
    assert port["dns_name"] == "web-1" and port["dns_domain"] == "example.net."
    assert port["dns_assignment"] == [{"hostname": host, "ip_address": ip,
                                       "fqdn": f"{host}.openstacklocal."}]
    listed = api.get(f"{N}/ports?dns_name=web-1", user="demo").json()["ports"]
    assert [p["id"] for p in listed] == [port["id"]]
    r = api.put(f"{N}/ports/{port['id']}", user="demo", json={"port": {"dns_name": "web-2",
                                                                      "dns_domain": ""}})
    assert r.json()["port"]["dns_name"] == "web-2" and r.json()["port"]["dns_domain"] == ""
    for bad in ("-bad", "a..b", "x" * 64, "a.123", "under_score", 5):
        neutron_error(api.put(f"{N}/ports/{port['id']}", user="demo",
                              json={"port": {"dns_name": bad}}), 400)
    n = create(api, "networks", "network", {"name": "dd", "dns_domain": "corp.example."},
               user="demo")
    assert n["dns_domain"] == "corp.example."
    r = api.put(f"{N}/networks/{n['id']}", user="demo", json={"network": {"dns_domain": "x.y."}})
    assert r.json()["network"]["dns_domain"] == "x.y."
    assert r.json()["network"]["revision_number"] == n["revision_number"] + 1
    assert api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]["dns_domain"] == ""
    neutron_error(api.put(f"{N}/networks/{n['id']}", user="demo",
                          json={"network": {"dns_domain": "bad_domain"}}), 400)


def test_floating_ip_dns_attributes(api):
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]["id"]
    fip = create(api, "floatingips", "floatingip", {"floating_network_id": public,
                                                    "dns_name": "fip1",
                                                    "dns_domain": "example.org."}, user="demo")
    assert (fip["dns_name"], fip["dns_domain"]) == ("fip1", "example.org.")
    shown = api.get(f"{N}/floatingips/{fip['id']}", user="demo").json()["floatingip"]
    assert (shown["dns_name"], shown["dns_domain"]) == ("fip1", "example.org.")


def test_configured_domain_names_hosts(tmp_path):
    gen = make_api(tmp_path / "data", network={"dns_domain": "example.org"})
    api = next(gen)
    try:
        net = create(api, "networks", "network", {"name": "n"}, user="demo")
        create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                          "cidr": "10.62.0.0/24"}, user="demo")
        port = create(api, "ports", "port", {"network_id": net["id"], "dns_name": "vm1"},
                      user="demo")
        ip = port["fixed_ips"][0]["ip_address"]
        assert port["dns_assignment"] == [{"hostname": "vm1", "ip_address": ip,
                                           "fqdn": "vm1.example.org."}]
        fq = create(api, "ports", "port", {"network_id": net["id"],
                                           "dns_name": "vm2.example.org."}, user="demo")
        assert fq["dns_assignment"][0]["fqdn"] == "vm2.example.org."
        # an FQDN outside the configured domain is refused
        r = api.post(f"{N}/ports", user="demo", json={"port": {
            "network_id": net["id"], "dns_name": "vm3.other.com."}})
        assert "dns_domain option" in neutron_error(r, 400)["message"]
        # no dns_name: host-<address> in the configured domain
        bare = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
        bip = bare["fixed_ips"][0]["ip_address"]
        assert bare["dns_assignment"][0]["fqdn"] == f"host-{bip.replace('.', '-')}.example.org."
    finally:
        gen.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)
