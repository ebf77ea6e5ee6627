"""Port bindings (`binding-extended`) over the in-process app: INACTIVE bindings beside a
compute port's ACTIVE one, activation swapping them, Neutron's errors and admin policies."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error
from tests.api.test_segments import (
    add_segment,
    add_subnet,
    first_segment,
    no_audit_findings,
    vlan_network,
)


def _compute_port(api, host: str = "") -> dict:
    net = create(api, "networks", "network", {"name": "pb-net"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                      "cidr": "10.91.0.0/24"}, user="demo")
    body = {"network_id": net["id"], "device_owner": "compute:nova",
            "device_id": "11111111-2222-3333-4444-555555555555"}
    if host:
        body["binding:host_id"] = host
    return create(api, "ports", "port", body)


def test_port_bindings_live_migration_flow(api):
    assert "binding-extended" in {e["alias"] for e in api.get(f"{N}/extensions").json()[
        "extensions"]}
    port = _compute_port(api, "src-host")
    B = f"{N}/ports/{port['id']}/bindings"
    listed = api.get(B).json()["bindings"]
    assert [(b["host"], b["status"], b["vif_type"]) for b in listed] == [
        ("src-host", "ACTIVE", "ovs")]
    # the destination's binding: INACTIVE, bound as the port would be there
    r = api.post(B, json={"binding": {"host": "dst-host", "profile": {"k": "v"}}})
    assert r.status_code == 201, r.text
    assert r.json()["binding"] == {
        "host": "dst-host", "vif_type": "ovs", "vnic_type": "normal", "status": "INACTIVE",
        "profile": {"k": "v"}, "vif_details": listed[0]["vif_details"]}
    neutron_error(api.post(B, json={"binding": {"host": "dst-host"}}), 409,
                  "PortBindingAlreadyExists")
    neutron_error(api.post(B, json={"binding": {"host": "src-host"}}), 409,
                  "PortBindingAlreadyExists")
    neutron_error(api.post(B, json={"binding": {"vnic_type": "normal"}}), 400)
    neutron_error(api.post(B, json={"binding": {"host": "h", "vnic_type": "bogus"}}), 400)
    assert {(b["host"], b["status"]) for b in api.get(B).json()["bindings"]} == {
        ("src-host", "ACTIVE"), ("dst-host", "INACTIVE")}
    assert [b["host"] for b in api.get(f"{B}?status=INACTIVE").json()["bindings"]] == [
        "dst-host"]
    assert api.get(f"{B}/dst-host").json()["binding"]["status"] == "INACTIVE"
    neutron_error(api.get(f"{B}/nowhere"), 404, "PortBindingNotFound")
    # activation swaps them; the port follows
    neutron_error(api.put(f"{B}/src-host/activate"), 409, "PortBindingAlreadyActive")
    neutron_error(api.put(f"{B}/nowhere/activate"), 404, "PortBindingNotFound")
    r = api.put(f"{B}/dst-host/activate")
    assert r.status_code == 200, r.text
    assert r.json()["binding"]["status"] == "ACTIVE"
    shown = api.get(f"{N}/ports/{port['id']}").json()["port"]
    assert (shown["binding:host_id"], shown["binding:profile"], shown["status"]) == (
        "dst-host", {"k": "v"}, "ACTIVE")
    assert {(b["host"], b["status"]) for b in api.get(B).json()["bindings"]} == {
        ("src-host", "INACTIVE"), ("dst-host", "ACTIVE")}
    # the source's binding is deleted; a host set on the port drops its INACTIVE binding
    assert api.delete(f"{B}/src-host").status_code == 204
    neutron_error(api.delete(f"{B}/src-host"), 404, "PortBindingNotFound")
    assert api.post(B, json={"binding": {"host": "third"}}).status_code == 201
    r = api.put(f"{N}/ports/{port['id']}", json={"port": {"binding:host_id": "third"}})
    assert r.status_code == 200, r.text
    assert [(b["host"], b["status"]) for b in api.get(B).json()["bindings"]] == [
        ("third", "ACTIVE")]
    # deleting the ACTIVE binding unbinds the port
    assert api.delete(f"{B}/third").status_code == 204
    shown = api.get(f"{N}/ports/{port['id']}").json()["port"]
    assert (shown["binding:host_id"], shown["binding:vif_type"]) == ("", "unbound")
    assert api.get(B).json()["bindings"] == []
    # with no ACTIVE binding, a new binding is the ACTIVE one
    r = api.post(B, json={"binding": {"host": "again"}})
    assert r.status_code == 201 and r.json()["binding"]["status"] == "ACTIVE"
    assert api.get(f"{N}/ports/{port['id']}").json()["port"]["binding:host_id"] == "again"
    # bindings go with their port
    assert api.post(B, json={"binding": {"host": "later"}}).status_code == 201
    assert api.delete(f"{N}/ports/{port['id']}").status_code == 204
    neutron_error(api.get(B), 404, "PortNotFound")


def test_port_bindings_refusals(api):
    port = _compute_port(api, "h1")
    B = f"{N}/ports/{port['id']}/bindings"
    # compute ports only
    plain = create(api, "ports", "port", {"network_id": port["network_id"]}, user="demo")
    err = neutron_error(api.get(f"{N}/ports/{plain['id']}/bindings"), 400, "BadRequest")
    assert "only valid on compute ports" in err["message"]
    # admin-only: the port's own project lists nothing and may not create, show or activate
    assert api.get(B, user="demo").json() == {"bindings": []}
    neutron_error(api.post(B, user="demo", json={"binding": {"host": "h2"}}), 403)
    neutron_error(api.get(f"{B}/h1", user="demo"), 404)
    assert api.post(B, json={"binding": {"host": "h2"}}).status_code == 201
    neutron_error(api.put(f"{B}/h2/activate", user="demo"), 404)
    neutron_error(api.delete(f"{B}/h2", user="demo"), 404)
    neutron_error(api.get(f"{N}/ports/00000000-0000-0000-0000-000000000000/bindings"), 404,
                  "PortNotFound")


def test_port_binding_on_a_routed_network(api):
    """An INACTIVE binding on a routed network only where the port's segment reaches
    (demo hosts: compute-r1-* on physnet1, compute-r2-* on physnet2)."""
    net = vlan_network(api, name="pb-routed")
    seg1 = first_segment(api, net["id"])
    seg2 = add_segment(api, net["id"])
    add_subnet(api, net["id"], "10.62.1.0/24", seg1["id"])
    add_subnet(api, net["id"], "10.62.2.0/24", seg2["id"])
    port = create(api, "ports", "port", {"network_id": net["id"], "device_owner": "compute:nova",
                                         "binding:host_id": "compute-r1-1"})
    B = f"{N}/ports/{port['id']}/bindings"
    neutron_error(api.post(B, json={"binding": {"host": "compute-r2-1"}}), 409,
                  "HostNotCompatibleWithFixedIps")
    r = api.post(B, json={"binding": {"host": "compute-r1-2"}})
    assert r.status_code == 201, r.text
    assert api.put(f"{B}/compute-r1-2/activate").status_code == 200
    assert api.get(f"{N}/ports/{port['id']}").json()["port"]["binding:host_id"] == "compute-r1-2"
    assert api.delete(f"{N}/ports/{port['id']}").status_code == 204
    no_audit_findings(api)
