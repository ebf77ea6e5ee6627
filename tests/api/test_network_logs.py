"""Network logs (`logging`) over the in-process app: Neutron's validation of resource and
target, its errors, the admin-or-project-manager policy, and logs going with their
security group and port."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_network import N, create, neutron_error

LOGS = f"{N}/log/logs"


@pytest.fixture(scope="module")
def manager(api) -> str:
    """A token of a user holding `manager` in project demo."""
    pid = api.get("/identity/v3/projects?name=demo").json()["projects"][0]["id"]
    name = f"mgr-{uuid.uuid4().hex[:6]}"
    uid = api.post("/identity/v3/users", json={"user": {
        "name": name, "password": "pw-secret", "domain_id": "default"}}).json()["user"]["id"]
    roles = {r["name"]: r["id"] for r in api.get("/identity/v3/roles").json()["roles"]}
    assert api.put(f"/identity/v3/projects/{pid}/users/{uid}/roles/{roles['manager']}"
                   ).status_code == 204
    return api.token(name, "demo", password="pw-secret")


def test_logs_of_a_security_group(api, manager):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert "logging" in aliases
    r = api.request("GET", f"{N}/log/loggable-resources", token=manager)
    assert r.json() == {"loggable_resources": [{"type": "security_group"}]}
    assert api.get(f"{N}/log/loggable-resources", user="demo").json()[
        "loggable_resources"] == []
    sg = create(api, "security-groups", "security_group", {"name": "logged"}, user="demo")
    net = create(api, "networks", "network", {"name": "lognet"}, user="demo")
    port = create(api, "ports", "port", {"network_id": net["id"],
                                         "security_groups": [sg["id"]]}, user="demo")
    other_port = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")

    def post(body: dict, token: str = manager):
        return api.request("POST", LOGS, token=token, json={"log": body})

    r = post({"name": "all", "resource_type": "security_group", "resource_id": sg["id"],
              "target_id": port["id"], "description": "d"})
    assert r.status_code == 201, r.text
    log = r.json()["log"]
    assert {k: log[k] for k in ("name", "resource_type", "resource_id", "target_id", "event",
                                "enabled", "description", "revision_number")} == {
        "name": "all", "resource_type": "security_group", "resource_id": sg["id"],
        "target_id": port["id"], "event": "ALL", "enabled": True, "description": "d",
        "revision_number": 0}
    assert log["project_id"] == sg["project_id"]
    r = post({"resource_type": "security_group", "event": "DROP"})  # every group
    assert r.status_code == 201 and r.json()["log"]["resource_id"] is None
    neutron_error(post({"resource_type": "firewall_group"}), 400, "InvalidLogResourceType")
    neutron_error(post({"resource_type": "security_group", "event": "SOME"}), 400)
    neutron_error(post({"resource_type": "security_group", "resource_id": "x"}), 400)
    neutron_error(post({"name": "x"}), 400)  # resource_type is required
    neutron_error(post({"resource_type": "security_group", "resource_id": str(uuid.uuid4())}),
                  404, "ResourceNotFound")
    neutron_error(post({"resource_type": "security_group", "target_id": str(uuid.uuid4())}),
                  404, "TargetResourceNotFound")
    neutron_error(post({"resource_type": "security_group", "resource_id": sg["id"],
                        "target_id": other_port["id"]}), 400, "InvalidResourceConstraint")
    # a member who is not a manager may do nothing and sees nothing
    neutron_error(api.post(LOGS, user="demo", json={"log": {
        "resource_type": "security_group"}}), 403)
    assert api.get(LOGS, user="demo").json()["logs"] == []
    neutron_error(api.get(f"{LOGS}/{log['id']}", user="demo"), 404, "LogResourceNotFound")
    listed = api.request("GET", f"{LOGS}?event=ALL", token=manager).json()["logs"]
    assert [x["id"] for x in listed] == [log["id"]]
    r = api.request("PUT", f"{LOGS}/{log['id']}", token=manager,
                    json={"log": {"enabled": False, "name": "off"}})
    assert r.status_code == 200, r.text
    assert r.json()["log"]["enabled"] is False and r.json()["log"]["revision_number"] == 1
    neutron_error(api.request("PUT", f"{LOGS}/{log['id']}", token=manager,
                              json={"log": {"event": "DROP"}}), 400)
    # a log goes with its port (and with its security group)
    assert api.delete(f"{N}/ports/{port['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{LOGS}/{log['id']}"), 404, "LogResourceNotFound")
    r = post({"resource_type": "security_group", "resource_id": sg["id"]})
    assert r.status_code == 201
    assert api.delete(f"{N}/security-groups/{sg['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{LOGS}/{r.json()['log']['id']}"), 404)
