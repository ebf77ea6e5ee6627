"""`openstack server create --wait` as a user meets it: the client looks once right after
the 202, then every 5 s. A single server is built before the API answers, so that first
look already sees ACTIVE (issue 24): through openstacksdk and through plain REST."""

from __future__ import annotations

import uuid

from tests.conftest import Cloud

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}


def test_sdk_create_then_first_look_is_active(cloud: Cloud) -> None:
    conn = cloud.sdk()
    net = conn.network.create_network(name=f"wait-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.77.0.0/24")
    flavor = conn.compute.find_flavor("m1.tiny")
    made = conn.compute.create_server(name="waited", flavor_id=flavor.id, image_id=CIRROS,
                                      networks=[{"uuid": net.id}])
    first = conn.compute.get_server(made.id)  # what wait_for_server looks at first
    assert first.status == "ACTIVE", (first.status, first.fault)
    assert [a["addr"] for a in first.addresses[net.name]][0].startswith("10.77.0.")
    conn.compute.delete_server(made.id)


def test_rest_create_then_immediate_get_is_active(cloud: Cloud) -> None:
    with cloud.http(cloud.token()) as http:
        made = http.post("/compute/v2.1/servers", headers=MV, json={"server": {
            "name": "rest-waited", "flavorRef": "1", "imageRef": CIRROS, "networks": "none"}})
        assert made.status_code == 202, made.text
        server_id = made.json()["server"]["id"]
        shown = http.get(f"/compute/v2.1/servers/{server_id}", headers=MV).json()["server"]
        assert (shown["status"], shown["OS-EXT-STS:task_state"]) == ("ACTIVE", None), shown
        assert shown["OS-EXT-SRV-ATTR:host"]
        assert http.delete(f"/compute/v2.1/servers/{server_id}").status_code == 204


def test_several_servers_in_one_request_are_still_built(cloud: Cloud) -> None:
    """min_count > 1 is left to the build workers, as before."""
    with cloud.http(cloud.token()) as http:
        made = http.post("/compute/v2.1/servers", headers=MV, json={"server": {
            "name": "pair", "flavorRef": "1", "imageRef": CIRROS, "networks": "none",
            "min_count": 2, "return_reservation_id": True}})
        assert made.status_code == 202, made.text
        rid = made.json()["reservation_id"]
        conn = cloud.sdk()
        servers = [s for s in conn.compute.servers() if s.reservation_id == rid]
        assert len(servers) == 2
        for s in servers:
            conn.compute.wait_for_server(s, status="ACTIVE", failures=["ERROR"], interval=0.1,
                                         wait=120)
            conn.compute.delete_server(s.id)
