"""kill -9 in the middle of a stack create, update and delete (20 resources, servers with
the ports they own), restart: every stack action ends COMPLETE or FAILED, and the cloud
holds exactly what the stack's recorded resources say — no orphan server, port or IP.

A TestResource `gate` that waits (polled across engine steps, committed IN_PROGRESS) sits
in the middle of the dependency graph, so the kill lands while the action is half done."""

from __future__ import annotations

import time

import httpx
import pytest

WAIT = 2.0  # the gate's wait: the window in which the process is killed


def template(image: str, gate_value: str) -> dict:
    server = {"type": "OS::Nova::Server", "properties": {
        "image": image, "flavor": "m1.tiny", "image_update_policy": "REPLACE",
        "networks": [{"subnet": {"get_resource": "subnet"}}]}}
    resources = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"}},
        "gate": {"type": "OS::Heat::TestResource",
                 "depends_on": [f"early{i}" for i in range(6)],
                 "properties": {"value": gate_value, "action_wait_secs": {
                     "create": WAIT, "update": WAIT, "delete": WAIT}}},
    }
    for i in range(6):
        resources[f"early{i}"] = server
        resources[f"late{i}"] = {**server, "depends_on": "gate"}
    for i in range(5):
        resources[f"v{i}"] = {"type": "OS::Heat::RandomString", "depends_on": "gate"}
    assert len(resources) == 20
    return {"heat_template_version": "2018-08-31", "resources": resources}


class Client:
    def __init__(self, cloud):
        self.cloud = cloud
        self.connect()

    def connect(self):
        self.token = self.cloud.token("demo", "demo")
        self.http = httpx.Client(base_url=self.cloud.url, timeout=60,
                                 headers={"X-Auth-Token": self.token})
        r = self.http.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": self.token})
        self.project = r.json()["token"]["project"]["id"]
        self.base = f"/orchestration/v1/{self.project}"

    def stack(self, url):
        return self.http.get(self.base + url).json()["stack"]

    def resources(self, url):
        return {r["resource_name"]: r for r in
                self.http.get(self.base + url + "/resources").json()["resources"]}

    def wait(self, url, condition, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting on {url}: {self.stack(url)}")

    def settled(self, url):
        return self.wait(url, lambda: (lambda s: s if not s["stack_status"].endswith(
            "IN_PROGRESS") else None)(self.stack(url)))

    def gate_in_progress(self, url, action):
        return self.wait(url, lambda: self.resources(url).get("gate", {}).get(
            "resource_status") == f"{action}_IN_PROGRESS")

    def cloud_state(self):
        servers = self.http.get("/compute/v2.1/servers").json()["servers"]
        ports = [p for p in self.http.get("/networking/v2.0/ports").json()["ports"]
                 if not p["device_owner"].startswith("network:")]
        nets = self.http.get("/networking/v2.0/networks",
                             params={"project_id": self.project}).json()["networks"]
        return servers, ports, nets


def crash_and_restart(cloud, client):
    cloud.stop(kill=True)
    cloud.start()
    client.connect()


def check_no_orphans(client, url):
    res = client.resources(url)
    servers, ports, nets = client.cloud_state()
    recorded = {r["physical_resource_id"] for n, r in res.items()
                if r["resource_type"] == "OS::Nova::Server"}
    assert {s["id"] for s in servers} == recorded
    assert {p["device_id"] for p in ports} == recorded  # every port is a server's
    assert len(ports) == len(recorded)  # one internal port each, none left over
    net = res.get("net", {}).get("physical_resource_id")
    assert [n["id"] for n in nets] == ([net] if net else [])


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_kill_during_create_update_delete(cloud_factory, backend):
    cloud = cloud_factory(backend)
    admin = httpx.Client(base_url=cloud.url, timeout=60,
                         headers={"X-Auth-Token": cloud.token()})
    image = admin.post("/image/v2/images", json={
        "name": "cirros2", "disk_format": "qcow2", "container_format": "bare",
        "visibility": "public"}).json()
    admin.put(f"/image/v2/images/{image['id']}/file", content=b"x" * 64,
              headers={"content-type": "application/octet-stream"}).raise_for_status()
    client = Client(cloud)
    # twelve servers, twenty-four during the replacing update: above Nova's default 10
    admin.put(f"/compute/v2.1/os-quota-sets/{client.project}", json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
    # create, killed while the gate waits (six servers built, six to go)
    r = client.http.post(client.base + "/stacks", json={
        "stack_name": "crash", "template": template("cirros", "a")})
    assert r.status_code == 201, r.text
    url = r.headers["location"].split(client.base)[1]
    client.gate_in_progress(url, "CREATE")
    crash_and_restart(cloud, client)
    stack = client.settled(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert len(client.resources(url)) == 20
    check_no_orphans(client, url)
    # update replacing all twelve servers, killed while the gate updates
    before = {n: r["physical_resource_id"] for n, r in client.resources(url).items()}
    r = client.http.put(client.base + url, json={"template": template("cirros2", "b")})
    assert r.status_code == 202, r.text
    client.gate_in_progress(url, "UPDATE")
    crash_and_restart(cloud, client)
    stack = client.settled(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    after = {n: r["physical_resource_id"] for n, r in client.resources(url).items()}
    assert all(after[f"early{i}"] != before[f"early{i}"] for i in range(6))
    assert all(after[f"late{i}"] != before[f"late{i}"] for i in range(6))
    check_no_orphans(client, url)
    # delete, killed while the gate is being deleted (the late servers are gone)
    assert client.http.delete(client.base + url).status_code == 204
    client.gate_in_progress(url, "DELETE")
    crash_and_restart(cloud, client)
    stack = client.settled(url)
    assert stack["stack_status"] == "DELETE_COMPLETE", stack["stack_status_reason"]
    servers, ports, nets = client.cloud_state()
    assert (servers, ports, nets) == ([], [], [])
