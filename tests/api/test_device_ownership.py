"""A port may not name another project's router or server as its device (issue 9, item 4),
and a server's interface list shows only what its owner's project can see."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_policy_matrix import _make_user

COMPUTE = {"OpenStack-API-Version": "compute 2.62"}


@pytest.fixture(scope="module")
def other(api: Any) -> str:
    _make_user(api, "device-other", "device-other", "member")
    return api.token("device-other", "device-other", "pw-secret")


def _network(api: Any, token: str | None = None, user: str = "demo") -> str:
    kwargs: dict[str, Any] = {"token": token} if token else {"user": user}
    net = api.post("/networking/v2.0/networks", json={"network": {"name": "dev"}},
                   **kwargs).json()["network"]["id"]
    r = api.post("/networking/v2.0/subnets", json={"subnet": {
        "network_id": net, "cidr": "10.91.0.0/24", "ip_version": 4}}, **kwargs)
    assert r.status_code == 201, r.text
    return net


def _server(api: Any) -> str:
    cirros = api.get("/image/v2/images?name=cirros").json()["images"][0]["id"]
    r = api.post("/compute/v2.1/servers", user="demo", headers=COMPUTE, json={"server": {
        "name": "victim", "flavorRef": "1", "imageRef": cirros, "networks": "none"}})
    assert r.status_code == 202, r.text
    return r.json()["server"]["id"]


def _port(api: Any, net: str, owner: str, device: str, **kwargs: Any) -> Any:
    return api.post("/networking/v2.0/ports", json={"port": {
        "network_id": net, "device_owner": owner, "device_id": device}}, **kwargs)


def test_port_on_another_projects_server_is_refused(api: Any, other: str) -> None:
    server = _server(api)
    net = _network(api, token=other)
    r = _port(api, net, "compute:nova", server, token=other)
    assert r.status_code == 409, r.text
    assert r.json()["NeutronError"]["type"] == "DeviceIDNotOwnedByTenant"
    assert server in r.json()["NeutronError"]["message"]
    # nor by renaming the device of an existing port
    port = api.post("/networking/v2.0/ports", token=other,
                    json={"port": {"network_id": net}}).json()["port"]["id"]
    r = api.put(f"/networking/v2.0/ports/{port}", token=other, json={"port": {
        "device_owner": "compute:nova", "device_id": server}})
    assert r.status_code == 409 and r.json()["NeutronError"]["type"] == \
        "DeviceIDNotOwnedByTenant"
    # the server's own project may, and an unknown device is not checked (as upstream)
    own = _network(api)
    assert _port(api, own, "compute:nova", server, user="demo").status_code == 201
    assert _port(api, net, "compute:nova", "no-such-server", token=other).status_code == 201


def test_router_interface_on_another_projects_router_is_refused(api: Any, other: str
                                                                ) -> None:
    router = api.post("/networking/v2.0/routers", user="demo",
                      json={"router": {"name": "victim"}}).json()["router"]["id"]
    net = _network(api, token=other)
    for owner in ("network:router_interface", "network:router_gateway"):
        r = _port(api, net, owner, router, token=other)
        assert r.status_code == 409, (owner, r.text)
        assert r.json()["NeutronError"]["type"] == "DeviceIDNotOwnedByTenant"
    mine = api.post("/networking/v2.0/routers", token=other,
                    json={"router": {"name": "mine"}}).json()["router"]["id"]
    assert _port(api, net, "network:router_interface", mine, token=other).status_code == 201


def test_interface_list_shows_only_the_owners_view(api: Any) -> None:
    server = _server(api)
    # an admin is exempt from the check, as upstream; its port on its own network is not
    # the server owner's to see, so it is not one of the server's interfaces
    admin_net = _network(api, user="admin")
    r = _port(api, admin_net, "compute:nova", server, user="admin")
    assert r.status_code == 201, r.text
    stray = r.json()["port"]["id"]
    own = _network(api)
    mine = _port(api, own, "compute:nova", server, user="demo").json()["port"]["id"]
    listed = api.get(f"/compute/v2.1/servers/{server}/os-interface", user="demo",
                     headers=COMPUTE)
    assert listed.status_code == 200, listed.text
    ids = {i["port_id"] for i in listed.json()["interfaceAttachments"]}
    assert mine in ids and stray not in ids
    r = api.get(f"/compute/v2.1/servers/{server}/os-interface/{stray}", user="demo",
                headers=COMPUTE)
    assert r.status_code == 404
