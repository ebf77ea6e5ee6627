"""Compute (Nova v2.1) over the in-process app: discovery, microversions, flavors,
keypairs, hosts and aggregates, and servers that need no network."""

from __future__ import annotations

import time

import pytest

from stackling.compute import microversions

MAX = str(microversions.MAX)
CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def mv(version: str) -> dict[str, str]:
    return {"OpenStack-API-Version": f"compute {version}"}


def wait_status(api, server_id, user="demo", statuses=("ACTIVE", "ERROR"), timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = api.get(f"/compute/v2.1/servers/{server_id}", user=user, headers=mv(MAX))
        if r.status_code == 200 and r.json()["server"]["status"] in statuses:
            return r.json()["server"]
        time.sleep(0.02)
    raise AssertionError(f"server {server_id} never reached {statuses}")


def boot(api, user="demo", version=MAX, **server):
    body = {"name": "vm", "flavorRef": "1", "imageRef": CIRROS, **server}
    return api.post("/compute/v2.1/servers", user=user, headers=mv(version),
                    json={"server": body})


def test_version_documents(api):
    r = api.get("/compute/", user=None)
    versions = r.json()["versions"]
    assert r.status_code == 200 and [v["id"] for v in versions] == ["v2.0", "v2.1"]
    assert versions[1]["version"] == MAX and versions[1]["min_version"] == "2.1"
    assert set(versions[1]) == {"id", "status", "version", "min_version", "updated", "links"}
    r = api.get("/compute/v2.1/", user=None).json()["version"]
    assert r["id"] == "v2.1" and r["media-types"][0]["base"] == "application/json"
    assert api.get("/compute/v2/", user=None).json()["version"]["id"] == "v2.0"
    r = api.get("/compute/v2.1", user=None, follow_redirects=False)
    assert r.status_code == 200 and r.json()["version"]["version"] == MAX


def test_microversion_headers(api):
    r = api.get("/compute/v2.1/flavors", headers=mv("2.37"))
    assert r.headers["OpenStack-API-Version"] == "compute 2.37"
    assert r.headers["X-OpenStack-Nova-API-Version"] == "2.37"
    assert "OpenStack-API-Version" in r.headers["Vary"]
    assert r.headers["x-openstack-request-id"].startswith("req-")
    assert r.headers["x-compute-request-id"] == r.headers["x-openstack-request-id"]
    r = api.get("/compute/v2.1/flavors", headers={"X-OpenStack-Nova-API-Version": "latest"})
    assert r.headers["X-OpenStack-Nova-API-Version"] == MAX
    assert api.get("/compute/v2.1/flavors").headers["X-OpenStack-Nova-API-Version"] == "2.1"
    r = api.get("/compute/v2.1/flavors", headers=mv("2.999"))
    assert r.status_code == 406
    assert f"Minimum is 2.1 and maximum is {MAX}." in r.json()["computeFault"]["message"]
    assert api.get("/compute/v2.1/flavors", headers=mv("2.x")).status_code == 400
    # a project id in the path is optional
    project = api.get("/identity/v3/auth/projects").json()["projects"][0]["id"]
    assert api.get(f"/compute/v2.1/{project}/flavors").status_code == 200


def test_flavors(api):
    r = api.get("/compute/v2.1/flavors/detail", user="demo").json()["flavors"]
    sizes = {f["name"]: (f["ram"], f["vcpus"], f["disk"]) for f in r}
    assert sizes == {"m1.tiny": (512, 1, 1), "m1.small": (2048, 1, 20),
                     "m1.medium": (4096, 2, 40), "m1.large": (8192, 4, 80),
                     "m1.xlarge": (16384, 8, 160)}
    tiny = api.get("/compute/v2.1/flavors/1", user="demo").json()["flavor"]
    assert tiny["swap"] == "" and tiny["OS-FLV-EXT-DATA:ephemeral"] == 0
    missing = api.get("/compute/v2.1/flavors/m1.tiny", user="demo")
    assert missing.status_code == 404 and "itemNotFound" in missing.json()
    body = {"flavor": {"name": "custom", "ram": 256, "vcpus": 1, "disk": 0, "id": "c1"}}
    assert api.post("/compute/v2.1/flavors", user="demo", json=body).status_code == 403
    r = api.post("/compute/v2.1/flavors", json=body)
    assert r.status_code == 200 and r.json()["flavor"]["id"] == "c1"
    assert api.post("/compute/v2.1/flavors", json=body).status_code == 409
    r = api.post("/compute/v2.1/flavors/c1/os-extra_specs",
                 json={"extra_specs": {"hw:cpu_policy": "shared"}})
    assert r.json() == {"extra_specs": {"hw:cpu_policy": "shared"}}
    assert api.get("/compute/v2.1/flavors/c1/os-extra_specs/hw:cpu_policy").json() == {
        "hw:cpu_policy": "shared"}
    page = api.get("/compute/v2.1/flavors?limit=2").json()
    assert len(page["flavors"]) == 2 and "marker=2" in page["flavors_links"][0]["href"]
    assert api.delete("/compute/v2.1/flavors/c1").status_code == 202
    bad = api.post("/compute/v2.1/flavors", json={"flavor": {"name": "x", "ram": 1}})
    assert bad.status_code == 400 and "'vcpus' is a required property" in bad.text


def test_keypairs(api):
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=mv("2.2"),
                 json={"keypair": {"name": "gen"}})
    assert r.status_code == 201, r.text
    kp = r.json()["keypair"]
    assert kp["private_key"].startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert kp["public_key"].startswith("ssh-ed25519 ") and kp["type"] == "ssh"
    assert len(kp["fingerprint"].split(":")) == 16
    imported = api.post("/compute/v2.1/os-keypairs", user="demo",
                        json={"keypair": {"name": "imp", "public_key": kp["public_key"]}})
    assert imported.status_code == 200 and "private_key" not in imported.json()["keypair"]
    assert imported.json()["keypair"]["fingerprint"] == kp["fingerprint"]
    dup = api.post("/compute/v2.1/os-keypairs", user="demo", json={"keypair": {"name": "imp"}})
    assert dup.status_code == 409
    bad = api.post("/compute/v2.1/os-keypairs", user="demo",
                   json={"keypair": {"name": "bad", "public_key": "ssh-rsa nope"}})
    assert bad.status_code == 400
    names = [k["keypair"]["name"] for k in api.get("/compute/v2.1/os-keypairs",
                                                    user="demo").json()["keypairs"]]
    assert names == ["gen", "imp"]
    assert api.get("/compute/v2.1/os-keypairs").json()["keypairs"] == []  # admin's own
    shown = api.get("/compute/v2.1/os-keypairs/gen", user="demo").json()["keypair"]
    assert shown["user_id"] and shown["deleted"] is False
    assert api.delete("/compute/v2.1/os-keypairs/imp", user="demo",
                      headers=mv("2.2")).status_code == 204
    assert api.get("/compute/v2.1/os-keypairs/imp", user="demo").status_code == 404


def test_services_hypervisors_az(api):
    assert api.get("/compute/v2.1/os-services", user="demo").status_code == 403
    services = [s for s in api.get("/compute/v2.1/os-services", headers=mv("2.11")).json()[
        "services"] if s["binary"] not in ("nova-scheduler", "nova-conductor")]
    assert {s["host"] for s in services} == {"compute-r1-1", "compute-r1-2", "compute-r2-1",
                                             "compute-r2-2"}
    assert all(s["binary"] == "nova-compute" and s["state"] == "up" and
               s["forced_down"] is False for s in services)
    assert "forced_down" not in api.get("/compute/v2.1/os-services").json()["services"][0]
    r = api.put("/compute/v2.1/os-services/disable-log-reason",
                json={"host": "compute-r2-2", "binary": "nova-compute",
                      "disabled_reason": "maintenance"})
    assert r.json()["service"] == {"host": "compute-r2-2", "binary": "nova-compute",
                                   "status": "disabled", "disabled_reason": "maintenance"}
    api.put("/compute/v2.1/os-services/enable",
            json={"host": "compute-r2-2", "binary": "nova-compute"})
    hyp = api.get("/compute/v2.1/os-hypervisors/detail", headers=mv("2.28")).json()
    first = hyp["hypervisors"][0]
    assert first["vcpus"] == 8 and isinstance(first["cpu_info"], dict)
    assert isinstance(api.get("/compute/v2.1/os-hypervisors/detail").json()[
        "hypervisors"][0]["cpu_info"], str)
    one = api.get(f"/compute/v2.1/os-hypervisors/{first['id']}").json()["hypervisor"]
    assert one["hypervisor_hostname"] == first["hypervisor_hostname"]
    assert api.get("/compute/v2.1/os-hypervisors/999").status_code == 404
    page = api.get("/compute/v2.1/os-hypervisors?limit=2", headers=mv("2.33")).json()
    assert len(page["hypervisors"]) == 2 and page["hypervisors_links"]
    zones = api.get("/compute/v2.1/os-availability-zone", user="demo").json()
    assert zones == {"availabilityZoneInfo": [{"zoneName": "nova",
                                               "zoneState": {"available": True},
                                               "hosts": None}]}
    assert api.get("/compute/v2.1/os-availability-zone/detail", user="demo").status_code == 403
    detail = api.get("/compute/v2.1/os-availability-zone/detail").json()
    by_zone = {z["zoneName"]: z for z in detail["availabilityZoneInfo"]}
    assert len(by_zone["nova"]["hosts"]) == 4
    # Nova's verbose view: the control services in `internal`, both under their one host
    (control,) = by_zone["internal"]["hosts"].values()
    assert set(control) == {"nova-scheduler", "nova-conductor"}
    assert control["nova-conductor"]["active"] and control["nova-conductor"]["available"]


def test_aggregates_mirror_placement(api):
    r = api.post("/compute/v2.1/os-aggregates", headers=mv("2.41"),
                 json={"aggregate": {"name": "rack2", "availability_zone": None}})
    assert r.status_code == 200, r.text
    agg = r.json()["aggregate"]
    assert "hosts" not in agg and "metadata" not in agg and agg["uuid"]
    url = f"/compute/v2.1/os-aggregates/{agg['id']}"
    r = api.post(f"{url}/action", json={"add_host": {"host": "compute-r2-1"}})
    assert r.json()["aggregate"]["hosts"] == ["compute-r2-1"]
    assert api.post(f"{url}/action", json={"add_host": {"host": "compute-r2-1"}}
                    ).status_code == 409
    assert api.post(f"{url}/action", json={"add_host": {"host": "nope"}}).status_code == 404
    from stackling.compute.hosts import node_uuid
    from stackling.placement import interface as placement

    with api.runtime.db.transaction() as db:
        from stackling.placement import aggregates, providers

        rp = providers.get(db, node_uuid("compute-r2-1"))
        assert aggregates.of_provider(db, rp.id) == [agg["uuid"]]
        assert placement.get_resource_provider(db, node_uuid("compute-r2-1"))
    r = api.post(f"{url}/action", json={"set_metadata": {"metadata": {"ssd": "true",
                                                                      "gone": None}}})
    assert r.json()["aggregate"]["metadata"] == {"ssd": "true"}
    assert api.delete(url).status_code == 400  # still has a host
    api.post(f"{url}/action", json={"remove_host": {"host": "compute-r2-1"}})
    assert api.post(f"{url}/action", json={"remove_host": {"host": "compute-r2-1"}}
                    ).status_code == 404
    assert api.delete(url).status_code == 200
    assert api.get(url).status_code == 404
    assert api.get("/compute/v2.1/os-aggregates", user="demo").status_code == 403


def test_limits(api):
    absolute = api.get("/compute/v2.1/limits", user="demo").json()["limits"]["absolute"]
    assert absolute["maxServerMeta"] == 128 and "maxImageMeta" in absolute
    latest = api.get("/compute/v2.1/limits", user="demo", headers=mv(MAX)).json()
    assert "maxImageMeta" not in latest["limits"]["absolute"]
    assert "maxSecurityGroups" not in latest["limits"]["absolute"]


def test_server_without_network_and_isolation(api):
    r = boot(api, networks="none")
    assert r.status_code == 202, r.text
    created = r.json()["server"]
    assert set(created) == {"id", "links", "OS-DCF:diskConfig", "security_groups", "adminPass"}
    assert r.headers["location"] == created["links"][0]["href"]
    server = wait_status(api, created["id"])
    assert server["status"] == "ACTIVE" and server["addresses"] == {}
    assert "OS-EXT-SRV-ATTR:host" not in server  # admin-only
    admin_view = api.get(f"/compute/v2.1/servers/{created['id']}").json()["server"]
    assert admin_view["OS-EXT-SRV-ATTR:host"].startswith("compute-")
    assert api.get(f"/compute/v2.1/servers/{created['id']}/ips", user="demo").json() == {
        "addresses": {}}
    # Another project's member sees nothing: 404, not 403.
    r = api.get(f"/compute/v2.1/servers/{created['id']}", user="admin", headers=mv(MAX))
    assert r.status_code == 200
    listed = api.get("/compute/v2.1/servers", user="demo").json()["servers"]
    assert created["id"] in {s["id"] for s in listed}
    assert created["id"] not in {s["id"] for s in api.get("/compute/v2.1/servers").json()[
        "servers"]}
    everyone = api.get("/compute/v2.1/servers/detail?all_tenants=1").json()["servers"]
    assert created["id"] in {s["id"] for s in everyone}
    assert api.get("/compute/v2.1/servers?all_tenants=1", user="demo").status_code == 403
    r = api.put(f"/compute/v2.1/servers/{created['id']}", user="demo", headers=mv("2.19"),
                json={"server": {"name": "renamed", "description": "d"}})
    assert r.status_code == 200 and r.json()["server"]["name"] == "renamed"
    assert api.delete(f"/compute/v2.1/servers/{created['id']}", user="demo").status_code == 204
    assert api.get(f"/compute/v2.1/servers/{created['id']}", user="demo").status_code == 404


def test_server_list_filters_and_paging(api):
    ids = [boot(api, name=f"page-{i}", networks="none").json()["server"]["id"] for i in range(3)]
    for sid in ids:
        wait_status(api, sid)
    page = api.get("/compute/v2.1/servers?limit=2&name=^page-", user="demo").json()
    assert len(page["servers"]) == 2 and page["servers_links"][0]["rel"] == "next"
    assert api.get("/compute/v2.1/servers?status=BOGUS", user="demo", headers=mv("2.38")
                   ).status_code == 400
    assert api.get("/compute/v2.1/servers?status=BOGUS", user="demo", headers=mv("2.37")
                   ).json()["servers"] == []
    active = api.get("/compute/v2.1/servers?status=ACTIVE&name=^page-", user="demo").json()
    assert {s["id"] for s in active["servers"]} == set(ids)
    assert api.get("/compute/v2.1/servers?marker=nope", user="demo").status_code == 400
    # a pattern that backtracks for hours is a 400 within the match budget, not a stall
    slow = boot(api, name="a" * 100 + "!", networks="none").json()["server"]["id"]
    ids.append(slow)
    r = api.get("/compute/v2.1/servers", params={"name": "(a|aa)+c"}, user="demo")
    assert r.status_code == 400 and "takes too long" in r.json()["badRequest"]["message"]
    r = api.get("/compute/v2.1/servers", params={"name": "((a{1000}){1000}){1000}"},
                user="demo")
    assert r.status_code == 400 and "repeats too much" in r.json()["badRequest"]["message"]
    # not a regular expression: a substring, as before
    assert api.get("/compute/v2.1/servers", params={"name": "page-1("}, user="demo"
                   ).json()["servers"] == []
    for sid in ids:
        api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


@pytest.mark.parametrize("server,message", [
    ({"flavorRef": "99"}, "Invalid flavorRef provided."),
    ({"imageRef": "6f1c5b3a-0000-4c8b-a1f0-3e7d2c9b8a41"}, "could not be found"),
    ({"key_name": "nope"}, "Invalid key_name provided."),
    ({"availability_zone": "nowhere"}, "availability zone is not available"),
    ({"name": " padded "}, "invalid 'name'"),
    ({"min_count": 3, "max_count": 2}, "min_count must be <= max_count"),
    ({"bogus": 1}, "Additional properties are not allowed ('bogus' was unexpected)"),
])
def test_create_bad_requests(api, server, message):
    r = boot(api, networks="none", **server)
    assert r.status_code == 400, r.text
    assert message in r.json()["badRequest"]["message"]


def test_power_actions_and_lock(api):
    sid = boot(api, networks="none").json()["server"]["id"]
    wait_status(api, sid)
    url = f"/compute/v2.1/servers/{sid}"
    assert api.post(f"{url}/action", user="demo", json={"os-stop": None}).status_code == 202
    server = api.get(url, user="demo", headers=mv(MAX)).json()["server"]
    assert server["status"] == "SHUTOFF" and server["OS-EXT-STS:power_state"] == 4
    r = api.post(f"{url}/action", user="demo", json={"os-stop": None})
    assert r.status_code == 409 and "while it is in vm_state stopped" in r.text
    assert api.post(f"{url}/action", user="demo", json={"os-start": None}).status_code == 202
    assert api.post(f"{url}/action", user="demo", json={"reboot": {"type": "HARD"}}
                    ).status_code == 202
    assert api.post(f"{url}/action", user="demo", json={"lock": None}).status_code == 202
    assert api.get(url, user="demo", headers=mv("2.9")).json()["server"]["locked"] is True
    assert api.delete(url, user="demo").status_code == 409
    assert api.post(f"{url}/action", user="demo", json={"unlock": None}).status_code == 202
    assert api.post(f"{url}/action", user="demo", json={"bogus": None}).status_code == 400
    assert api.delete(url, user="demo").status_code == 204


def test_no_valid_host_is_error_with_fault(api):
    # m1.xlarge needs 16384 MB; every host has 16384 MB with 512 reserved.
    sid = boot(api, flavorRef="5", networks="none").json()["server"]["id"]
    server = wait_status(api, sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["code"] == 500 and "details" not in server["fault"]
    assert server["fault"]["message"] == "No valid host was found. "
    admin = api.get(f"/compute/v2.1/servers/{sid}", headers=mv(MAX)).json()["server"]
    assert "details" in admin["fault"] and admin["OS-EXT-SRV-ATTR:host"] is None
    assert api.delete(f"/compute/v2.1/servers/{sid}", user="demo").status_code == 204


def test_network_failure_at_build_rolls_back_the_claim(api, monkeypatch):
    from stackling.common.errors import Conflict
    from stackling.compute import network_api
    from stackling.placement import interface as placement

    def fail(*_a, **_k):
        raise Conflict("IP allocation failed")

    monkeypatch.setattr(network_api, "allocate_for_instance", fail)
    sid = boot(api, networks="none").json()["server"]["id"]
    server = wait_status(api, sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == (
        f"Build of instance {sid} aborted: Failed to allocate the network(s), not rescheduling.")
    with api.runtime.db.transaction() as db:
        assert placement.get_allocations_for_consumer(db, sid) == {}
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


def test_placement_claim_and_release(api):
    from stackling.compute.hosts import node_uuid
    from stackling.placement import interface as placement

    sid = boot(api, networks="none", flavorRef="2").json()["server"]["id"]
    wait_status(api, sid)
    host = api.get(f"/compute/v2.1/servers/{sid}").json()["server"]["OS-EXT-SRV-ATTR:host"]
    with api.runtime.db.transaction() as db:
        allocations = placement.get_allocations_for_consumer(db, sid)
        assert allocations == {node_uuid(host): {
            "generation": allocations[node_uuid(host)]["generation"],
            "resources": {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20}}}
    hyp = api.get("/compute/v2.1/os-hypervisors/detail").json()["hypervisors"]
    assert {h["hypervisor_hostname"]: h["running_vms"] for h in hyp}[host] >= 1
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")
    with api.runtime.db.transaction() as db:
        assert placement.get_allocations_for_consumer(db, sid) == {}


def test_server_tags(api):
    sid = boot(api, networks="none").json()["server"]["id"]
    url = f"/compute/v2.1/servers/{sid}/tags"
    assert api.get(url, user="demo", headers=mv("2.25")).status_code == 404
    h = mv("2.26")
    assert api.put(url, user="demo", headers=h, json={"tags": ["a", "b"]}).json() == {
        "tags": ["a", "b"]}
    assert api.put(f"{url}/c", user="demo", headers=h).status_code == 201
    assert api.get(f"{url}/c", user="demo", headers=h).status_code == 204
    assert api.delete(f"{url}/a", user="demo", headers=h).status_code == 204
    assert api.get(f"{url}/a", user="demo", headers=h).status_code == 404
    assert api.get(f"/compute/v2.1/servers/{sid}", user="demo", headers=h).json()[
        "server"]["tags"] == ["b", "c"]
    for query, found in (("tags=b,c", True), ("tags=b,z", False), ("tags-any=z,c", True),
                         ("not-tags=b,c", False), ("not-tags-any=z", True)):
        ids = {s["id"] for s in api.get(f"/compute/v2.1/servers?{query}", user="demo",
                                        headers=h).json()["servers"]}
        assert (sid in ids) is found, query
    assert api.put(f"{url}/bad,tag", user="demo", headers=h).status_code == 400
    assert api.delete(url, user="demo", headers=h).status_code == 204
    assert api.get(url, user="demo", headers=h).json() == {"tags": []}
    wait_status(api, sid)
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


def test_boot_into_an_availability_zone(api):
    agg = api.post("/compute/v2.1/os-aggregates",
                   json={"aggregate": {"name": "zone2", "availability_zone": "az2"}}).json()
    agg_id = agg["aggregate"]["id"]
    api.post(f"/compute/v2.1/os-aggregates/{agg_id}/action",
             json={"add_host": {"host": "compute-r2-1"}})
    zones = {z["zoneName"] for z in api.get("/compute/v2.1/os-availability-zone",
                                            user="demo").json()["availabilityZoneInfo"]}
    assert zones == {"nova", "az2"}
    ids = [boot(api, networks="none", availability_zone="az2").json()["server"]["id"]
           for _ in range(2)]
    for sid in ids:
        wait_status(api, sid)
        server = api.get(f"/compute/v2.1/servers/{sid}", headers=mv(MAX)).json()["server"]
        assert server["OS-EXT-SRV-ATTR:host"] == "compute-r2-1"
        assert server["OS-EXT-AZ:availability_zone"] == "az2"
    forced = boot(api, networks="none", availability_zone="nova:compute-r1-1")
    assert forced.status_code == 403
    forced = boot(api, user="admin", networks="none", availability_zone="nova:compute-r1-2")
    server = wait_status(api, forced.json()["server"]["id"], user="admin")
    assert server["OS-EXT-SRV-ATTR:host"] == "compute-r1-2"
    assert server["OS-EXT-AZ:availability_zone"] == "nova"
    ids.append(server["id"])
    for sid in ids:
        api.delete(f"/compute/v2.1/servers/{sid}")
    api.post(f"/compute/v2.1/os-aggregates/{agg_id}/action",
             json={"remove_host": {"host": "compute-r2-1"}})
    api.delete(f"/compute/v2.1/os-aggregates/{agg_id}")


def test_server_metadata(api):
    sid = boot(api, networks="none", metadata={"a": "1"}).json()["server"]["id"]
    url = f"/compute/v2.1/servers/{sid}/metadata"
    assert api.get(url, user="demo").json() == {"metadata": {"a": "1"}}
    assert api.post(url, user="demo", json={"metadata": {"b": "2"}}).json() == {
        "metadata": {"a": "1", "b": "2"}}
    assert api.put(f"{url}/c", user="demo", json={"meta": {"c": "3"}}).json() == {
        "meta": {"c": "3"}}
    assert api.get(f"{url}/c", user="demo").json() == {"meta": {"c": "3"}}
    assert api.put(f"{url}/c", user="demo", json={"meta": {"d": "3"}}).status_code == 400
    assert api.delete(f"{url}/a", user="demo").status_code == 204
    assert api.put(url, user="demo", json={"metadata": {"x": "y"}}).json() == {
        "metadata": {"x": "y"}}
    assert api.get(f"{url}/a", user="demo").status_code == 404
    wait_status(api, sid)
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


def test_microversions_2_47_to_2_61(api):
    # 2.52 tags at create; 2.47 the flavor embedded in the server
    r = boot(api, version="2.52", networks="none", tags=["web", "web", "db"])
    sid = r.json()["server"]["id"]
    server = wait_status(api, sid)
    assert server["tags"] == ["web", "db"]
    assert server["flavor"] == {"vcpus": 1, "ram": 512, "disk": 1, "ephemeral": 0, "swap": 0,
                                "original_name": "m1.tiny", "extra_specs": {}}
    old = api.get(f"/compute/v2.1/servers/{sid}", user="demo", headers=mv("2.46")).json()
    assert old["server"]["flavor"]["id"] == "1" and "links" in old["server"]["flavor"]
    assert boot(api, version="2.51", networks="none", tags=["x"]).status_code == 400
    # 2.57 personality is gone
    old_style = boot(api, version="2.56", networks="none", personality=[])
    assert old_style.status_code == 202
    wait_status(api, old_style.json()["server"]["id"])
    api.delete(f"/compute/v2.1/servers/{old_style.json()['server']['id']}", user="demo")
    r = boot(api, version="2.57", networks="none", personality=[])
    assert r.status_code == 400 and "'personality' was unexpected" in r.text
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")
    # 2.55 flavor description, 2.61 extra specs in the body
    body = {"flavor": {"name": "described", "ram": 128, "vcpus": 1, "disk": 0, "id": "d1",
                       "description": "small"}}
    assert api.post("/compute/v2.1/flavors", headers=mv("2.54"), json=body).status_code == 400
    created = api.post("/compute/v2.1/flavors", headers=mv("2.55"), json=body).json()["flavor"]
    assert created["description"] == "small" and "extra_specs" not in created
    api.post("/compute/v2.1/flavors/d1/os-extra_specs", json={"extra_specs": {"k": "v"}})
    shown = api.get("/compute/v2.1/flavors/d1", headers=mv("2.61")).json()["flavor"]
    assert shown["extra_specs"] == {"k": "v"} and shown["description"] == "small"
    listed = api.get("/compute/v2.1/flavors", headers=mv("2.55")).json()["flavors"]
    assert {f["id"]: f["description"] for f in listed}["d1"] == "small"
    r = api.put("/compute/v2.1/flavors/d1", headers=mv("2.55"),
                json={"flavor": {"description": "tiny"}})
    assert r.status_code == 200 and r.json()["flavor"]["description"] == "tiny"
    assert api.put("/compute/v2.1/flavors/d1", headers=mv("2.54"),
                   json={"flavor": {"description": "x"}}).status_code == 404
    api.delete("/compute/v2.1/flavors/d1")


def test_services_and_hypervisors_by_uuid_from_2_53(api):
    h = mv("2.53")
    services = api.get("/compute/v2.1/os-services", headers=h).json()["services"]
    target = next(s for s in services if s["host"] == "compute-r2-2")
    assert len(target["id"]) == 36
    url = f"/compute/v2.1/os-services/{target['id']}"
    r = api.put(url, headers=h, json={"status": "disabled", "disabled_reason": "repair"})
    assert r.status_code == 200, r.text
    assert r.json()["service"]["status"] == "disabled"
    assert r.json()["service"]["disabled_reason"] == "repair"
    assert api.put(url, headers=h, json={"status": "enabled", "disabled_reason": "x"}
                   ).status_code == 400
    assert api.put(url, headers=h, json={"status": "enabled"}).json()["service"][
        "disabled_reason"] is None
    assert api.put("/compute/v2.1/os-services/enable", headers=h,
                   json={"host": "compute-r2-2", "binary": "nova-compute"}).status_code == 400
    hyps = api.get("/compute/v2.1/os-hypervisors/detail?with_servers=true", headers=h).json()
    node = next(x for x in hyps["hypervisors"] if x["hypervisor_hostname"] == "compute-r2-2")
    assert len(node["id"]) == 36 and node["service"]["id"] == target["id"]
    assert api.get(f"/compute/v2.1/os-hypervisors/{node['id']}", headers=h).status_code == 200
    assert api.get("/compute/v2.1/os-hypervisors/1", headers=h).status_code == 400
    found = api.get("/compute/v2.1/os-hypervisors?hypervisor_hostname_pattern=r1-",
                    headers=h).json()["hypervisors"]
    assert {x["hypervisor_hostname"] for x in found} == {"compute-r1-1", "compute-r1-2"}


def test_hypervisor_uptime(api):
    node = api.get("/compute/v2.1/os-hypervisors").json()["hypervisors"][0]
    r = api.get(f"/compute/v2.1/os-hypervisors/{node['id']}/uptime").json()["hypervisor"]
    assert " up " in r["uptime"] and r["hypervisor_hostname"] == node["hypervisor_hostname"]


def test_instance_actions(api):
    sid = boot(api, networks="none").json()["server"]["id"]
    wait_status(api, sid)
    api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", json={"os-stop": None})
    url = f"/compute/v2.1/servers/{sid}/os-instance-actions"
    listed = api.get(url, user="demo").json()["instanceActions"]
    assert [a["action"] for a in listed] == ["stop", "create"]
    assert "updated_at" not in listed[0]
    create = listed[1]
    assert create["instance_uuid"] == sid and create["request_id"].startswith("req-")
    # events: admin-only before 2.51; from 2.51 for the owner too, without traceback
    shown = api.get(f"{url}/{create['request_id']}", user="demo").json()["instanceAction"]
    assert "events" not in shown
    shown = api.get(f"{url}/{create['request_id']}", user="demo", headers=mv("2.51")).json()
    (event,) = shown["instanceAction"]["events"]
    assert event["event"] == "compute__do_build_and_run_instance"
    assert event["result"] == "Success" and "traceback" not in event
    admin = api.get(f"{url}/{create['request_id']}", headers=mv("2.62")).json()
    (event,) = admin["instanceAction"]["events"]
    assert event["host"].startswith("compute-") and len(event["hostId"]) == 56
    page = api.get(f"{url}?limit=1", user="demo", headers=mv("2.58")).json()
    assert len(page["instanceActions"]) == 1 and "updated_at" in page["instanceActions"][0]
    assert page["links"][0]["rel"] == "next"
    api.delete(f"/compute/v2.1/servers/{sid}", user="demo")
    # 2.21: the actions of a deleted server stay readable; before, 404
    assert api.get(url, user="demo", headers=mv("2.20")).status_code == 404
    after = api.get(url, user="demo", headers=mv("2.21")).json()["instanceActions"]
    assert [a["action"] for a in after] == ["delete", "stop", "create"]
    assert api.get(url, user="admin", headers=mv("2.21")).status_code == 200


def test_delete_a_compute_service(api):
    """Last in this module: it removes a host (one that runs nothing yet)."""
    h = mv("2.53")
    idle = next(x["hypervisor_hostname"] for x in api.get(
        "/compute/v2.1/os-hypervisors/detail", headers=h).json()["hypervisors"]
        if x["running_vms"] == 0)
    svc = next(s for s in api.get("/compute/v2.1/os-services", headers=h).json()["services"]
               if s["host"] == idle)
    sid = boot(api, user="admin", networks="none",
               availability_zone=f"nova:{idle}").json()["server"]["id"]
    wait_status(api, sid, user="admin")
    url = f"/compute/v2.1/os-services/{svc['id']}"
    assert api.delete(url, headers=h).status_code == 409  # hosts an instance
    api.delete(f"/compute/v2.1/servers/{sid}")
    assert api.delete(url, headers=h).status_code == 204
    hosts = {x["hypervisor_hostname"] for x in api.get("/compute/v2.1/os-hypervisors").json()[
        "hypervisors"]}
    assert idle not in hosts
    assert api.delete(url, headers=h).status_code == 404
