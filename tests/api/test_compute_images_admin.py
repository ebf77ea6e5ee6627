"""Issue 23: Nova's image proxy (/images below 2.36), os-hosts update and power actions,
os-hypervisors search/servers (below 2.53), os-instance_usage_audit_log and the legacy
/extensions list, with Nova's bodies and errors (in-process API)."""

from __future__ import annotations

import pytest

from tests.api.test_compute import CIRROS, boot, mv, wait_status

OLD = "2.35"


@pytest.fixture(scope="module", autouse=True)
def unlimited(api):
    from tests.api.test_compute_actions import lift_quotas

    lift_quotas(api)


def _snapshot(api, name="snap", user="demo"):
    r = boot(api, user=user, networks="none")
    assert r.status_code == 202, r.text
    sid = wait_status(api, r.json()["server"]["id"], user=user)["id"]
    r = api.post(f"/compute/v2.1/servers/{sid}/action", user=user, headers=mv("2.45"),
                 json={"createImage": {"name": name, "metadata": {"k": "v"}}})
    assert r.status_code == 202, r.text
    return sid, r.json()["image_id"]


def test_image_proxy_list_show_and_version_guard(api):
    sid, image_id = _snapshot(api, "proxy-snap")
    r = api.get("/compute/v2.1/images", user="demo", headers=mv(OLD))
    assert r.status_code == 200
    ids = [i["id"] for i in r.json()["images"]]
    assert image_id in ids and CIRROS in ids
    brief = next(i for i in r.json()["images"] if i["id"] == image_id)
    assert set(brief) == {"id", "name", "links"}
    assert [link["rel"] for link in brief["links"]] == ["self", "bookmark", "alternate"]
    r = api.get(f"/compute/v2.1/images/{image_id}", user="demo", headers=mv(OLD))
    assert r.status_code == 200
    image = r.json()["image"]
    assert image["status"] == "ACTIVE" and image["progress"] == 100
    assert image["server"]["id"] == sid and image["metadata"]["k"] == "v"
    assert image["metadata"]["image_type"] == "snapshot"
    assert image["created"].endswith("Z") and "OS-EXT-IMG-SIZE:size" in image
    detail = api.get(f"/compute/v2.1/images/detail?server={sid}", user="demo",
                     headers=mv(OLD)).json()["images"]
    assert [i["id"] for i in detail] == [image_id]
    r = api.get("/compute/v2.1/images?limit=1", user="demo", headers=mv(OLD))
    assert len(r.json()["images"]) == 1 and "images_links" in r.json()
    # gone from 2.36, as Nova's other proxies
    assert api.get("/compute/v2.1/images", user="demo", headers=mv("2.36")).status_code == 404
    assert api.get(f"/compute/v2.1/images/{image_id}", user="demo",
                   headers=mv("2.36")).status_code == 404
    r = api.get("/compute/v2.1/images/00000000-0000-0000-0000-000000000000", user="demo",
                headers=mv(OLD))
    assert r.status_code == 404 and r.json()["itemNotFound"]["message"] == "Image not found."


def test_image_proxy_metadata_crud_and_delete(api):
    _, image_id = _snapshot(api, "meta-snap")
    base = f"/compute/v2.1/images/{image_id}/metadata"
    r = api.post(base, user="demo", headers=mv(OLD), json={"metadata": {"a": "1", "b": "2"}})
    assert r.status_code == 200 and r.json()["metadata"]["a"] == "1"
    assert r.json()["metadata"]["k"] == "v"  # merged
    r = api.get(f"{base}/a", user="demo", headers=mv(OLD))
    assert r.status_code == 200 and r.json() == {"meta": {"a": "1"}}
    r = api.put(f"{base}/a", user="demo", headers=mv(OLD), json={"meta": {"a": "x"}})
    assert r.status_code == 200 and r.json() == {"meta": {"a": "x"}}
    r = api.put(f"{base}/a", user="demo", headers=mv(OLD), json={"meta": {"b": "x"}})
    assert r.status_code == 400
    r = api.put(f"{base}/a", user="demo", headers=mv(OLD), json={"meta": {"a": "x", "b": "y"}})
    assert r.status_code == 400
    assert api.delete(f"{base}/a", user="demo", headers=mv(OLD)).status_code == 204
    assert api.get(f"{base}/a", user="demo", headers=mv(OLD)).status_code == 404
    assert api.delete(f"{base}/a", user="demo", headers=mv(OLD)).status_code == 404
    r = api.put(base, user="demo", headers=mv(OLD), json={"metadata": {"only": "this"}})
    assert r.status_code == 200 and r.json()["metadata"] == {"only": "this"}
    assert api.get(base, user="demo", headers=mv(OLD)).json() == {"metadata": {"only": "this"}}
    # the image service sees the same properties
    assert api.get(f"/image/v2/images/{image_id}", user="demo").json()["only"] == "this"
    # the public cirros belongs to the admin project: demo may not change it
    r = api.post(f"/compute/v2.1/images/{CIRROS}/metadata", user="demo", headers=mv(OLD),
                 json={"metadata": {"x": "y"}})
    assert r.status_code == 403
    r = api.post(base, user="demo", headers=mv(OLD), json={"metadata": "nope"})
    assert r.status_code == 400
    assert api.delete(f"/compute/v2.1/images/{image_id}", user="demo",
                      headers=mv(OLD)).status_code == 204
    assert api.get(f"/image/v2/images/{image_id}", user="demo").status_code == 404
    assert api.delete(f"/compute/v2.1/images/{image_id}", user="demo",
                      headers=mv(OLD)).status_code == 404


def _host(api):
    return api.get("/compute/v2.1/os-hosts", headers=mv(OLD)).json()["hosts"][0]["host_name"]


def test_os_hosts_update_and_power_actions(api):
    compute = next(h["host_name"] for h in api.get("/compute/v2.1/os-hosts", headers=mv(OLD))
                   .json()["hosts"] if h["service"] == "compute")
    path = f"/compute/v2.1/os-hosts/{compute}"
    r = api.put(path, headers=mv(OLD), json={"status": "disable"})
    assert r.status_code == 200 and r.json() == {"host": compute, "status": "disabled"}
    svc = api.get(f"/compute/v2.1/os-services?host={compute}&binary=nova-compute").json()
    assert svc["services"][0]["status"] == "disabled"
    r = api.put(path, headers=mv(OLD), json={"status": "Enable"})
    assert r.status_code == 200 and r.json()["status"] == "enabled"
    assert api.put(path, headers=mv(OLD), json={"status": "bogus"}).status_code == 400
    assert api.put(path, headers=mv(OLD), json={"extra": "x"}).status_code == 400
    r = api.put(path, headers=mv(OLD), json={})
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "'status' or 'maintenance_mode' needed for host update")
    assert api.put(path, headers=mv(OLD), json={"maintenance_mode": "enable"}).status_code == 501
    r = api.put("/compute/v2.1/os-hosts/nosuchhost", headers=mv(OLD), json={"status": "enable"})
    assert r.status_code == 404
    assert api.put(path, user="demo", headers=mv(OLD),
                   json={"status": "enable"}).status_code == 403
    for action in ("startup", "shutdown", "reboot"):
        assert api.get(f"{path}/{action}", headers=mv(OLD)).status_code == 501
        assert api.get(f"/compute/v2.1/os-hosts/nosuchhost/{action}",
                       headers=mv(OLD)).status_code == 404
        assert api.get(f"{path}/{action}", user="demo", headers=mv(OLD)).status_code == 403
        assert api.get(f"{path}/{action}", headers=mv("2.43")).status_code == 404
    assert api.put(path, headers=mv("2.43"), json={"status": "enable"}).status_code == 404


def test_hypervisor_search_and_servers_below_2_53(api):
    hyps = api.get("/compute/v2.1/os-hypervisors", headers=mv("2.52")).json()["hypervisors"]
    name = hyps[0]["hypervisor_hostname"]
    r = api.get(f"/compute/v2.1/os-hypervisors/{name}/search", headers=mv("2.52"))
    assert r.status_code == 200
    assert [h["hypervisor_hostname"] for h in r.json()["hypervisors"]] == [name]
    assert set(r.json()["hypervisors"][0]) == {"id", "hypervisor_hostname", "state", "status"}
    r = api.get("/compute/v2.1/os-hypervisors/nomatch/search", headers=mv("2.52"))
    assert r.status_code == 404 and r.json()["itemNotFound"]["message"] == (
        "No hypervisor matching 'nomatch' could be found.")
    r = boot(api, user="demo", networks="none")
    server = wait_status(api, r.json()["server"]["id"], user="demo")
    srv = api.get(f"/compute/v2.1/servers/{server['id']}", headers=mv("2.52")).json()["server"]
    node = srv["OS-EXT-SRV-ATTR:hypervisor_hostname"]
    r = api.get(f"/compute/v2.1/os-hypervisors/{node}/servers", headers=mv("2.52"))
    assert r.status_code == 200
    hyp = next(h for h in r.json()["hypervisors"] if h["hypervisor_hostname"] == node)
    assert {"uuid": server["id"], "name": server["name"]} in hyp["servers"]
    assert api.get(f"/compute/v2.1/os-hypervisors/{name}/servers",
                   headers=mv("2.53")).status_code == 404
    assert api.get(f"/compute/v2.1/os-hypervisors/{name}/search", user="demo",
                   headers=mv("2.52")).status_code == 403


def test_instance_usage_audit_log(api):
    r = api.get("/compute/v2.1/os-instance_usage_audit_log")
    assert r.status_code == 200
    log = r.json()["instance_usage_audit_logs"]
    assert log["num_hosts"] == log["num_hosts_not_run"] == len(log["hosts_not_run"]) >= 1
    assert log["total_instances"] == 0 and log["log"] == {}
    r = api.get("/compute/v2.1/os-instance_usage_audit_log/2026-03-15 10:00:00")
    assert r.status_code == 200
    one = r.json()["instance_usage_audit_log"]
    assert one["period_beginning"] == "2026-02-01 00:00:00"
    assert one["period_ending"] == "2026-03-01 00:00:00"
    r = api.get("/compute/v2.1/os-instance_usage_audit_log/2026-01-10 01:02:03.5")
    assert r.json()["instance_usage_audit_log"]["period_beginning"] == "2025-12-01 00:00:00"
    r = api.get("/compute/v2.1/os-instance_usage_audit_log/notadate")
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "Invalid timestamp for date notadate")
    assert api.get("/compute/v2.1/os-instance_usage_audit_log",
                   user="demo").status_code == 403


def test_extensions_list_and_show(api):
    r = api.get("/compute/v2.1/extensions", user="demo")
    assert r.status_code == 200
    aliases = {e["alias"] for e in r.json()["extensions"]}
    assert {"os-hosts", "images", "os-keypairs", "os-server-groups"} <= aliases
    r = api.get("/compute/v2.1/extensions/os-keypairs", user="demo")
    assert r.status_code == 200 and r.json()["extension"]["name"] == "Keypairs"
    assert api.get("/compute/v2.1/extensions/os-nothing", user="demo").status_code == 404


def test_security_group_proxy_ids_and_cidr(api):
    h = mv(OLD)
    sg = api.post("/compute/v2.1/os-security-groups", user="demo", headers=h, json={
        "security_group": {"name": "cidrs", "description": "d"}}).json()["security_group"]
    for bad in ("sg-not-an-int", "12"):
        for call in (api.get, api.delete):
            r = call(f"/compute/v2.1/os-security-groups/{bad}", user="demo", headers=h)
            assert r.status_code == 400, (bad, r.text)
            assert r.json()["badRequest"]["message"] == "Security group id should be uuid"
        r = api.put(f"/compute/v2.1/os-security-groups/{bad}", user="demo", headers=h,
                    json={"security_group": {"name": "n", "description": "d"}})
        assert r.status_code == 400
        r = api.post("/compute/v2.1/os-security-group-rules", user="demo", headers=h, json={
            "security_group_rule": {"parent_group_id": bad, "ip_protocol": "tcp",
                                    "from_port": 22, "to_port": 22}})
        assert r.status_code == 400
        assert api.delete(f"/compute/v2.1/os-security-group-rules/{bad}", user="demo",
                          headers=h).status_code == 400

    def rule(cidr):
        return api.post("/compute/v2.1/os-security-group-rules", user="demo", headers=h, json={
            "security_group_rule": {"parent_group_id": sg["id"], "ip_protocol": "tcp",
                                    "from_port": 80, "to_port": 80, "cidr": cidr}})

    r = rule("10.2.3.0%2F24")  # URL-quoted, as Nova unquotes it
    assert r.status_code == 200, r.text
    assert r.json()["security_group_rule"]["ip_range"] == {"cidr": "10.2.3.0/24"}
    for bad in ("10.2.3.4", "10.2.3.0/", "not-a-cidr", "10.0.0.0/33"):
        r = rule(bad)
        assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
            f"{bad} is not a valid IP network."), bad
    r = api.post("/compute/v2.1/os-security-group-rules", user="demo", headers=h, json={
        "security_group_rule": {"parent_group_id": sg["id"], "ip_protocol": "tcp",
                                "from_port": 81, "to_port": 81, "group_id": "x1"}})
    assert r.status_code == 400
