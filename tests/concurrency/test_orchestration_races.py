"""Concurrent actions on one stack from several processes sharing one database: parallel
updates, deletes and suspends of the same stack, and creates of the same stack name.
Exactly one of each race wins, the others get Heat's 409 (never a 500), and the stack
ends in one consistent state with one action run."""

from __future__ import annotations

import time

import pytest

from tests.concurrency.test_quota_races import parallel

BACKENDS = ["sqlite", "postgresql", "mariadb"]


def _template(value: str) -> dict:
    # An update stays IN_PROGRESS for 3 s: the parallel updates, released together, all
    # arrive within it even on a loaded machine (they must find it in progress).
    return {"heat_template_version": "2018-08-31", "resources": {
        "v": {"type": "OS::Heat::Value", "properties": {"value": value}},
        "wait": {"type": "OS::Heat::TestResource", "properties": {
            "value": value, "action_wait_secs": {"create": 0.5, "update": 3}}}}}


def _wait(http, url: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = http.get(url).json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        time.sleep(0.05)
    raise AssertionError(f"{url} still {stack['stack_status']}")


def _cloud(cloud_factory, backend: str) -> tuple:
    """A served cloud (3 processes on the servers), a new project's member token, and the
    project's orchestration URL."""
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 3)
    member = server.new_project_member()
    project = member["project"].id
    return server, project, member["sdk"].session.get_token(), f"/orchestration/v1/{project}"


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_actions_on_one_stack(cloud_factory, backend):
    server, project, token, base = _cloud(cloud_factory, backend)
    # the same name created 6 times at once: one stack
    creates = parallel(server, token, [("POST", f"{base}/stacks", {
        "stack_name": "race", "template": _template("a")})] * 6)
    assert sorted(r.status_code for r in creates) == [201] + [409] * 5, \
        [r.text for r in creates]
    assert {r.json()["error"]["type"] for r in creates if r.status_code == 409} == {
        "StackExists"}
    url = creates[[r.status_code for r in creates].index(201)].json()["stack"]["links"][0][
        "href"].split("/orchestration/v1/" + project)[1]
    with server.http(token) as http:
        assert _wait(http, base + url)["stack_status"] == "CREATE_COMPLETE"
        # six updates at once: one runs, the others find it in progress
        updates = parallel(server, token, [("PATCH", base + url, {
            "template": _template(f"u{i}")}) for i in range(6)])
        codes = sorted(r.status_code for r in updates)
        assert codes == [202] + [409] * 5, [r.text for r in updates]
        stack = _wait(http, base + url)
        assert stack["stack_status"] == "UPDATE_COMPLETE"
        value = http.get(base + url + "/resources/v").json()["resource"]["attributes"]
        winner = next(i for i, r in enumerate(updates) if r.status_code == 202)
        assert value["value"] == f"u{winner}"
        events = http.get(base + url + "/events").json()["events"]
        assert [e["resource_status"] for e in events if e["resource_name"] == "race"
                and e["resource_status"].startswith("UPDATE")] == [
            "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
        # deletes and suspends at once: never a 500 (a 404 once the delete has ended),
        # and the stack ends deleted
        mixed = parallel(server, token, [("DELETE", base + url, {})] * 3 + [
            ("POST", base + url + "/actions", {"suspend": None})] * 3)
        assert all(r.status_code in (200, 204, 404, 409) for r in mixed), \
            [(r.status_code, r.text) for r in mixed]
        assert any(r.status_code == 204 for r in mixed[:3]) or \
            any(r.status_code == 200 for r in mixed[3:]), [r.text for r in mixed]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            r = http.get(base + url)
            if r.status_code == 404 or r.json()["stack"]["stack_status"] in (
                    "DELETE_COMPLETE", "SUSPEND_COMPLETE"):
                break
            time.sleep(0.05)
        if r.status_code != 404 and r.json()["stack"]["stack_status"] == "SUSPEND_COMPLETE":
            d = http.delete(base + url)
            assert d.status_code == 204, (d.text, [(m.status_code, m.text[:80]) for m in mixed],
                                          [(e["resource_name"], e["resource_status"]) for e in
                                           http.get(base + url + "/events").json()["events"]])
        _wait_gone(http, base + url)


def _wait_gone(http, url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = http.get(url)
        if r.status_code == 404 or r.json()["stack"]["stack_status"] == "DELETE_COMPLETE":
            return
        time.sleep(0.05)
    raise AssertionError(f"{url} not deleted: {r.text}")


def _net_template(value: str, wait: float) -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.78.0.0/24"}},
        "gate": {"type": "OS::Heat::TestResource", "depends_on": "subnet", "properties": {
            "value": value, "action_wait_secs": {"update": wait}}},
        "port": {"type": "OS::Neutron::Port", "depends_on": "gate", "properties": {
            "network": {"get_resource": "net"}, "name": value}}}}


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_delete_during_an_update_leaves_nothing(cloud_factory, backend):
    server, project, token, base = _cloud(cloud_factory, backend)
    with server.http(token) as http:
        r = http.post(f"{base}/stacks", json={"stack_name": "busy",
                                              "template": _net_template("a", 1.0)})
        assert r.status_code == 201, r.text
        url = base + r.json()["stack"]["links"][0]["href"].split(base)[1]
        assert _wait(http, url)["stack_status"] == "CREATE_COMPLETE"
        # `gate` holds the update (for ever) until the delete: wait for it to be there
        r = http.patch(url, json={"template": _net_template("b", -1)})
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 60
        while http.get(url + "/resources/gate").json()["resource"]["resource_status"] != \
                "UPDATE_IN_PROGRESS":
            assert time.monotonic() < deadline, http.get(url + "/resources/gate").text
            time.sleep(0.05)
        assert http.get(url).json()["stack"]["stack_status"] == "UPDATE_IN_PROGRESS"
        assert http.delete(url).status_code == 204
        _wait_gone(http, url)
        nets = http.get(f"/networking/v2.0/networks?project_id={project}").json()["networks"]
        ports = http.get(f"/networking/v2.0/ports?project_id={project}").json()["ports"]
        assert nets == [] and ports == [], (nets, ports)
