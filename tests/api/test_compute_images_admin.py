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


# ------------------------------------------------------------------ server details
def _active(api, **kw):
    r = boot(api, user="demo", **kw)
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"])["id"]


def _act(api, sid, body, version="2.1"):
    return api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv(version),
                    json=body)


def test_rebuild_shows_key_name_from_2_54_and_user_data_from_2_57(api):
    sid = _active(api, networks="none")
    api.post("/compute/v2.1/os-keypairs", user="demo", json={"keypair": {"name": "rb-key"}})
    r = _act(api, sid, {"rebuild": {"imageRef": CIRROS}}, "2.53")
    assert r.status_code == 202 and "key_name" not in r.json()["server"]
    r = _act(api, sid, {"rebuild": {"imageRef": CIRROS, "key_name": "rb-key"}}, "2.54")
    assert r.status_code == 202, r.text
    assert r.json()["server"]["key_name"] == "rb-key" and "user_data" not in r.json()["server"]
    r = _act(api, sid, {"rebuild": {"imageRef": CIRROS, "user_data": "aGk=",
                                    "key_name": None}}, "2.57")
    assert r.status_code == 202, r.text
    server = r.json()["server"]
    assert server["user_data"] == "aGk=" and server["key_name"] is None


def test_resize_changes_disk_config(api):
    sid = _active(api, networks="none")
    show = f"/compute/v2.1/servers/{sid}"
    assert api.get(show, user="demo").json()["server"]["OS-DCF:diskConfig"] == "MANUAL"
    r = _act(api, sid, {"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "AUTO"}})
    assert r.status_code == 202, r.text
    assert _act(api, sid, {"confirmResize": None}).status_code == 204
    assert api.get(show, user="demo").json()["server"]["OS-DCF:diskConfig"] == "AUTO"


def test_server_password_show_and_clear(api):
    sid = _active(api, networks="none")
    path = f"/compute/v2.1/servers/{sid}/os-server-password"
    r = api.get(path, user="demo")
    assert r.status_code == 200 and r.json() == {"password": ""}
    assert api.delete(path, user="demo").status_code == 204
    assert api.get(path, user="admin").status_code == 200
    assert api.get("/compute/v2.1/servers/00000000-0000-0000-0000-000000000000/"
                   "os-server-password", user="demo").status_code == 404


def test_x509_keypairs_generated_and_imported(api):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    h = mv("2.2")
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=h, json={
        "keypair": {"name": "win", "type": "x509"}})
    assert r.status_code == 201, r.text
    kp = r.json()["keypair"]
    assert kp["type"] == "x509" and kp["private_key"].startswith("-----BEGIN RSA PRIVATE KEY")
    cert = x509.load_pem_x509_certificate(kp["public_key"].encode())
    assert len(kp["fingerprint"].split(":")) == 20
    assert cert.fingerprint(hashes.SHA1()).hex() == kp["fingerprint"].replace(":", "")
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=h, json={
        "keypair": {"name": "win2", "type": "x509", "public_key": kp["public_key"]}})
    assert r.status_code == 201 and r.json()["keypair"]["fingerprint"] == kp["fingerprint"]
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=h, json={
        "keypair": {"name": "win3", "type": "x509", "public_key": "not a certificate"}})
    assert r.status_code == 400
    shown = api.get("/compute/v2.1/os-keypairs/win", user="demo", headers=h).json()["keypair"]
    assert shown["type"] == "x509"


def test_remove_security_group_down_to_none(api):
    sid = _active(api, networks="auto")
    show = f"/compute/v2.1/servers/{sid}"
    assert api.get(show, user="demo").json()["server"]["security_groups"] == [{"name": "default"}]
    assert _act(api, sid, {"removeSecurityGroup": {"name": "default"}}).status_code == 202
    assert "security_groups" not in api.get(show, user="demo").json()["server"]
    assert api.get(f"{show}/os-security-groups", user="demo").json() == {"security_groups": []}
    assert _act(api, sid, {"addSecurityGroup": {"name": "default"}}).status_code == 202
    assert api.get(show, user="demo").json()["server"]["security_groups"] == [{"name": "default"}]


def test_console_output_length_and_console_page_token(api):
    sid = _active(api, networks="none")
    full = _act(api, sid, {"os-getConsoleOutput": {}}).json()["output"]
    r = _act(api, sid, {"os-getConsoleOutput": {"length": 2}})
    assert r.status_code == 200 and r.json()["output"].splitlines() == full.splitlines()[-2:]
    assert _act(api, sid, {"os-getConsoleOutput": {"length": -1}}).json()["output"] == full
    assert _act(api, sid, {"os-getConsoleOutput": {"length": -2}}).status_code == 400
    url = _act(api, sid, {"os-getVNCConsole": {"type": "novnc"}}).json()["console"]["url"]
    from urllib.parse import urlsplit

    page = api.client.get(urlsplit(url).path + "?" + urlsplit(url).query)
    assert page.status_code == 200 and sid in page.text
    bad = api.client.get("/compute/vnc_lite.html?path=%3Ftoken%3Dnot-a-token")
    assert bad.status_code == 401


def test_quota_update_below_usage_needs_force_and_classes_take_every_key(api):
    project = api.get("/identity/v3/auth/projects", user="demo").json()["projects"][0]["id"]
    _active(api, networks="none")  # demo uses at least one instance
    path = f"/compute/v2.1/os-quota-sets/{project}"
    r = api.put(path, json={"quota_set": {"instances": 0}})
    assert r.status_code == 400 and "must be greater than or equal to already used" in r.json()[
        "badRequest"]["message"]
    r = api.put(path, json={"quota_set": {"instances": 0, "force": "True"}})
    assert r.status_code == 200 and r.json()["quota_set"]["instances"] == 0
    assert api.put(path, json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}}
                   ).status_code == 200
    keys = ("instances", "cores", "ram", "metadata_items", "key_pairs", "server_groups",
            "server_group_members")
    body = {k: 100 + i for i, k in enumerate(keys)}
    r = api.put("/compute/v2.1/os-quota-class-sets/w23class", headers=mv("2.62"),
                json={"quota_class_set": body})
    assert r.status_code == 200 and r.json()["quota_class_set"] == body
    shown = api.get("/compute/v2.1/os-quota-class-sets/w23class", headers=mv("2.62")).json()
    assert shown["quota_class_set"] == {"id": "w23class", **body}
    r = api.put("/compute/v2.1/os-quota-class-sets/w23class", headers=mv("2.62"),
                json={"quota_class_set": {"injected_files": 3}})
    assert r.status_code == 400  # gone from 2.57


def test_stable_device_rescue_with_the_images_rescue_properties(api):
    sid = _active(api, networks="none")
    image = api.post("/image/v2/images", user="demo", json={
        "name": "rescue-cd", "disk_format": "qcow2", "container_format": "bare",
        "hw_rescue_device": "cdrom", "hw_rescue_bus": "ide"}).json()
    assert api.put(f"/image/v2/images/{image['id']}/file", user="demo", content=b"iso",
                   headers={"Content-Type": "application/octet-stream"}).status_code == 204
    r = _act(api, sid, {"rescue": {"rescue_image_ref": image["id"]}}, "2.62")
    assert r.status_code == 200, r.text
    server = api.get(f"/compute/v2.1/servers/{sid}", user="demo").json()["server"]
    assert server["status"] == "RESCUE" and server["OS-EXT-STS:vm_state"] == "rescued"
    assert _act(api, sid, {"unrescue": None}, "2.62").status_code == 202
    assert api.get(f"/compute/v2.1/servers/{sid}", user="demo").json()["server"][
        "status"] == "ACTIVE"
