"""Local IPs (`local_ip`) over the in-process app: addresses from a port or from a new
`network:local_ip` port, port associations, Neutron's errors, and what stays in use."""

from __future__ import annotations

import uuid

from tests.api.test_network import N, create, neutron_error

LIPS = f"{N}/local_ips"


def _net(api, cidr: str) -> tuple[dict, dict]:
    net = create(api, "networks", "network", {"name": f"lip-{cidr}"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": cidr}, user="demo")
    return net, sub


def test_local_ips_and_associations(api):
    assert "local_ip" in {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    net, sub = _net(api, "10.77.1.0/24")
    r = api.post(LIPS, user="demo", json={"local_ip": {
        "name": "lip", "network_id": net["id"], "local_ip_address": "10.77.1.50"}})
    assert r.status_code == 201, r.text
    lip = r.json()["local_ip"]
    assert {k: lip[k] for k in ("name", "network_id", "local_ip_address", "ip_mode",
                                "revision_number")} == {
        "name": "lip", "network_id": net["id"], "local_ip_address": "10.77.1.50",
        "ip_mode": "translate", "revision_number": 0}
    port = api.get(f"{N}/ports/{lip['local_port_id']}", user="demo").json()["port"]
    assert (port["device_owner"], port["device_id"]) == ("network:local_ip", lip["id"])
    assert port["project_id"] == lip["project_id"]
    neutron_error(api.delete(f"{N}/ports/{port['id']}", user="demo"), 409, "ServicePortInUse")
    neutron_error(api.delete(f"{N}/networks/{net['id']}", user="demo"), 409, "NetworkInUse")
    neutron_error(api.delete(f"{N}/subnets/{sub['id']}", user="demo"), 409)
    # from a port the caller names: its one address, or the one asked for
    own = create(api, "ports", "port", {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": sub["id"], "ip_address": "10.77.1.20"}]}, user="demo")  # not .253/.254
    r = api.post(LIPS, user="demo", json={"local_ip": {"local_port_id": own["id"],
                                                       "ip_mode": "passthrough"}})
    assert r.status_code == 201, r.text
    assert r.json()["local_ip"]["local_ip_address"] == own["fixed_ips"][0]["ip_address"]
    neutron_error(api.post(LIPS, user="demo", json={"local_ip": {
        "local_port_id": own["id"], "local_ip_address": "10.77.1.254"}}), 400,
        "LocalIPRequestedIPNotFound")
    neutron_error(api.post(LIPS, user="demo", json={"local_ip": {"name": "x"}}), 400,
                  "LocalIPPortOrNetworkRequired")
    neutron_error(api.post(LIPS, user="demo", json={"local_ip": {
        "local_port_id": str(uuid.uuid4())}}), 400, "BadRequest")
    neutron_error(api.post(LIPS, user="demo", json={"local_ip": {
        "network_id": net["id"], "ip_mode": "bridge"}}), 400)
    v6 = create(api, "networks", "network", {"name": "lip-v6"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": v6["id"], "ip_version": 6,
                                      "cidr": "fd77::/64"}, user="demo")
    err = neutron_error(api.post(LIPS, user="demo", json={"local_ip": {
        "network_id": v6["id"]}}), 400, "BadRequest")
    assert "does not contain any IPv4 subnet" in err["message"]
    # associations
    vm = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    assoc_url = f"{LIPS}/{lip['id']}/port_associations"
    r = api.post(assoc_url, user="demo", json={"port_association": {"fixed_port_id": vm["id"]}})
    assert r.status_code == 201, r.text
    assert r.json()["port_association"] == {
        "local_ip_id": lip["id"], "local_ip_address": "10.77.1.50", "fixed_port_id": vm["id"],
        "fixed_ip": vm["fixed_ips"][0]["ip_address"], "host": ""}
    neutron_error(api.post(assoc_url, user="demo", json={"port_association": {
        "fixed_port_id": vm["id"]}}), 409)
    neutron_error(api.post(assoc_url, user="demo", json={"port_association": {
        "fixed_port_id": own["id"], "fixed_ip": "10.77.1.253"}}), 400,
        "LocalIPRequestedIPNotFound")
    neutron_error(api.post(assoc_url, user="demo", json={"port_association": {}}), 400)
    listed = api.get(f"{assoc_url}?fixed_port_id={vm['id']}", user="demo").json()
    assert [a["fixed_port_id"] for a in listed["port_associations"]] == [vm["id"]]
    second = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    assert api.post(assoc_url, user="demo", json={"port_association": {
        "fixed_port_id": second["id"]}}).status_code == 201
    page = api.get(f"{assoc_url}?limit=1&sort_key=fixed_ip&sort_dir=asc", user="demo").json()
    assert len(page["port_associations"]) == 1
    nxt = [x["href"] for x in page["port_associations_links"] if x["rel"] == "next"][0]
    rest = api.get("/networking" + nxt.split("/networking", 1)[1],
                   user="demo").json()["port_associations"]
    assert {a["fixed_port_id"] for a in page["port_associations"] + rest} == {
        vm["id"], second["id"]}
    assert api.delete(f"{assoc_url}/{second['id']}", user="demo").status_code == 204
    neutron_error(api.delete(f"{LIPS}/{lip['id']}", user="demo"), 409, "LocalIPInUse")
    r = api.put(f"{LIPS}/{lip['id']}", user="demo", json={"local_ip": {"name": "renamed"}})
    assert r.status_code == 200 and r.json()["local_ip"]["revision_number"] == 1
    neutron_error(api.put(f"{LIPS}/{lip['id']}", user="demo", json={"local_ip": {
        "ip_mode": "passthrough"}}), 400)
    assert api.delete(f"{assoc_url}/{vm['id']}", user="demo").status_code == 204
    neutron_error(api.delete(f"{assoc_url}/{vm['id']}", user="demo"), 404,
                  "LocalIPAssociationNotFound")
    # an association goes with its port
    r = api.post(assoc_url, user="demo", json={"port_association": {"fixed_port_id": vm["id"]}})
    assert r.status_code == 201
    assert api.delete(f"{N}/ports/{vm['id']}", user="demo").status_code == 204
    assert api.get(assoc_url, user="demo").json()["port_associations"] == []
    assert api.delete(f"{LIPS}/{lip['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/ports/{port['id']}", user="demo"), 404)  # its port went too
    neutron_error(api.get(f"{LIPS}/{lip['id']}", user="demo"), 404, "LocalIPNotFound")
