"""A list marker the caller cannot see never positions a page (issue 9, item 3)."""

from __future__ import annotations

from typing import Any

from tests.api.test_policy_matrix import _make_user


def _other_token(api: Any) -> str:
    if not api.get("/identity/v3/users?name=marker-other").json()["users"]:
        _make_user(api, "marker-other", "marker-other", "member")
    return api.token("marker-other", "marker-other", "pw-secret")


def test_network_marker_of_another_project_is_404(api: Any) -> None:
    other = _other_token(api)
    hidden = api.post("/networking/v2.0/networks", token=other,
                      json={"network": {"name": "hidden"}}).json()["network"]["id"]
    mine = api.post("/networking/v2.0/networks", user="demo",
                    json={"network": {"name": "mine"}}).json()["network"]["id"]
    r = api.get(f"/networking/v2.0/networks?limit=1&marker={hidden}", user="demo")
    assert r.status_code == 404
    assert r.json()["NeutronError"]["type"] == "NetworkNotFound"
    assert r.json()["NeutronError"]["message"] == f"Network {hidden} could not be found."
    # the same probe with sort keys (bisection by name) is refused too
    r = api.get(f"/networking/v2.0/networks?limit=1&sort_key=name&marker={hidden}",
                user="demo")
    assert r.status_code == 404
    # a visible marker pages as before; the owner may page from its own network
    assert api.get(f"/networking/v2.0/networks?limit=1&marker={mine}",
                   user="demo").status_code == 200
    assert api.get(f"/networking/v2.0/networks?limit=1&marker={hidden}",
                   token=other).status_code == 200


def test_port_and_security_group_markers_follow_visibility(api: Any) -> None:
    other = _other_token(api)
    sg = api.post("/networking/v2.0/security_groups", token=other,
                  json={"security_group": {"name": "x"}}).json()["security_group"]["id"]
    r = api.get(f"/networking/v2.0/security_groups?limit=1&marker={sg}", user="demo")
    assert r.status_code == 404
    assert r.json()["NeutronError"]["type"] == "SecurityGroupNotFound"
    r = api.get("/networking/v2.0/ports?limit=1&marker=00000000-0000-4000-8000-00000000abcd",
                user="demo")
    assert r.status_code == 404 and r.json()["NeutronError"]["type"] == "PortNotFound"


def test_private_flavor_marker_is_not_found_for_a_member(api: Any) -> None:
    r = api.post("/compute/v2.1/flavors", json={"flavor": {
        "name": "private-marker", "ram": 64, "vcpus": 1, "disk": 0,
        "os-flavor-access:is_public": False}})
    assert r.status_code == 200, r.text
    flavor = r.json()["flavor"]["id"]
    r = api.get(f"/compute/v2.1/flavors?limit=1&marker={flavor}", user="demo")
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == f"marker [{flavor}] not found"
    assert api.get(f"/compute/v2.1/flavors?is_public=None&limit=1&marker={flavor}"
                   ).status_code == 200


def test_usage_marker_of_another_projects_server_is_not_found(api: Any) -> None:
    other = _other_token(api)
    cirros = api.get("/image/v2/images?name=cirros").json()["images"][0]["id"]
    headers = {"OpenStack-API-Version": "compute 2.40"}
    r = api.post("/compute/v2.1/servers", token=other, headers=headers, json={"server": {
        "name": "theirs", "flavorRef": "1", "imageRef": cirros, "networks": "none"}})
    assert r.status_code == 202, r.text
    theirs = r.json()["server"]["id"]
    demo = api.get("/identity/v3/projects?name=demo").json()["projects"][0]["id"]
    r = api.get(f"/compute/v2.1/os-simple-tenant-usage/{demo}?limit=1&marker={theirs}",
                user="demo", headers=headers)
    assert r.status_code == 400, r.text
    assert r.json()["badRequest"]["message"] == f"Marker {theirs} could not be found."


def test_flavor_pages_start_after_their_marker(api: Any) -> None:
    # Nova's default order is flavorid ascending; each page starts after the last one's
    # marker, also for the detail list and a sort key of the caller's
    for suffix, query in (("", ""), ("/detail", ""), ("", "&sort_key=memory_mb"),
                          ("/detail", "&sort_key=name&sort_dir=desc")):
        url = f"/compute/v2.1/flavors{suffix}?{query.lstrip('&')}"
        every = [f["id"] for f in api.get(url, user="demo").json()["flavors"]]
        assert len(every) >= 3, every
        seen: list[str] = []
        marker = ""
        while True:
            page = api.get(f"/compute/v2.1/flavors{suffix}?limit=2{query}{marker}",
                           user="demo")
            assert page.status_code == 200, page.text
            ids = [f["id"] for f in page.json()["flavors"]]
            if not ids:
                break
            seen += ids
            marker = f"&marker={ids[-1]}"
        assert seen == every, (suffix, query)
