"""Server actions without a hypervisor (in-process API): pause/unpause, suspend/resume,
shelve/shelveOffload/unshelve, rescue/unrescue, rebuild, createImage, trigger_crash_dump,
console output, remote consoles and diagnostics, with Nova's states, codes and bodies."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.api.test_compute import CIRROS, MAX, boot, mv, wait_status


@pytest.fixture(scope="module", autouse=True)
def unlimited(api):
    """These modules boot more servers than the default quota of 10 per project."""
    lift_quotas(api)


def lift_quotas(api):
    for user in ("admin", "demo"):
        project = api.get("/identity/v3/auth/projects", user=user).json()["projects"][0]["id"]
        r = api.put(f"/compute/v2.1/os-quota-sets/{project}", json={"quota_set": {
            "instances": -1, "cores": -1, "ram": -1}})
        assert r.status_code == 200, r.text


def _server(api, user="demo", **kw):
    r = boot(api, user=user, networks="none", **kw)
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"], user=user)


def act(api, sid, body, user="demo", version=MAX):
    return api.post(f"/compute/v2.1/servers/{sid}/action", user=user, headers=mv(version),
                    json=body)


def show(api, sid, user="admin"):
    return api.get(f"/compute/v2.1/servers/{sid}", user=user, headers=mv(MAX)).json()["server"]


def allocations(api, sid):
    r = api.get(f"/placement/allocations/{sid}", headers={"OpenStack-API-Version":
                                                           "placement 1.28"})
    return r.json()["allocations"]


def last_action(api, sid, user="admin"):
    acts = api.get(f"/compute/v2.1/servers/{sid}/os-instance-actions", user=user,
                   headers=mv(MAX)).json()["instanceActions"]
    return acts[0]


def test_pause_suspend_and_their_states(api):
    s = _server(api)
    sid = s["id"]
    assert act(api, sid, {"pause": None}).status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "PAUSED" and srv["OS-EXT-STS:power_state"] == 3
    assert last_action(api, sid)["action"] == "pause"
    r = act(api, sid, {"pause": None})
    assert r.status_code == 409
    assert r.json()["conflictingRequest"]["message"] == (
        f"Cannot 'pause' instance {sid} while it is in vm_state paused")
    assert act(api, sid, {"suspend": None}).status_code == 409
    assert act(api, sid, {"unpause": None}).status_code == 202
    assert show(api, sid)["status"] == "ACTIVE"
    assert act(api, sid, {"suspend": None}).status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "SUSPENDED" and srv["OS-EXT-STS:power_state"] == 7
    assert act(api, sid, {"resume": None}).status_code == 202
    assert show(api, sid)["status"] == "ACTIVE"
    # a locked server refuses its owner
    assert act(api, sid, {"lock": None}).status_code == 202
    r = act(api, sid, {"pause": None})
    assert r.status_code == 409 and "is locked" in r.json()["conflictingRequest"]["message"]
    assert act(api, sid, {"unlock": None}).status_code == 202


def test_shelve_releases_the_host_and_unshelve_claims_again(api):
    sid = _server(api)["id"]
    assert show(api, sid)["OS-EXT-SRV-ATTR:host"]
    assert allocations(api, sid)
    assert act(api, sid, {"shelve": None}).status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "SHELVED_OFFLOADED" and srv["OS-EXT-SRV-ATTR:host"] is None
    assert allocations(api, sid) == {}
    images = api.get("/image/v2/images?name=vm-shelved", user="demo").json()["images"]
    assert len(images) == 1 and images[0]["image_type"] == "snapshot"
    # shelveOffload needs an admin and a shelved (not yet offloaded) server
    assert act(api, sid, {"shelveOffload": None}).status_code == 403
    r = act(api, sid, {"shelveOffload": None}, user="admin")
    assert r.status_code == 409
    assert act(api, sid, {"unshelve": None}).status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"]
    alloc = allocations(api, sid)
    assert [a["resources"]["VCPU"] for a in alloc.values()] == [1]
    assert api.get("/image/v2/images?name=vm-shelved", user="demo").json()["images"] == []
    assert [a["action"] for a in api.get(
        f"/compute/v2.1/servers/{sid}/os-instance-actions", user="demo",
        headers=mv(MAX)).json()["instanceActions"]][:2] == ["unshelve", "shelve"]


def test_rescue_and_unrescue(api):
    sid = _server(api)["id"]
    r = act(api, sid, {"rescue": {"adminPass": "s3cret"}})
    assert r.status_code == 200 and r.json() == {"adminPass": "s3cret"}
    assert show(api, sid)["status"] == "RESCUE"
    assert act(api, sid, {"rescue": None}).status_code == 409
    assert act(api, sid, {"unrescue": None}).status_code == 202
    assert show(api, sid)["status"] == "ACTIVE"
    r = act(api, sid, {"rescue": None})
    assert r.status_code == 200 and r.json()["adminPass"]
    assert act(api, sid, {"unrescue": None}).status_code == 202
    r = act(api, sid, {"rescue": {"rescue_image_ref": "not-a-uuid"}})
    assert r.status_code == 400


def test_rebuild_keeps_the_server_and_takes_the_new_image(api):
    sid = _server(api)["id"]
    r = act(api, sid, {"rebuild": {"imageRef": CIRROS, "name": "rebuilt",
                                   "metadata": {"k": "v"}}}, version="2.74")
    assert r.status_code == 202, r.text
    body = r.json()["server"]
    assert body["id"] == sid and body["name"] == "rebuilt" and body["adminPass"]
    assert body["metadata"] == {"k": "v"} and body["image"]["id"] == CIRROS
    assert "OS-EXT-STS:vm_state" not in body  # the whole server only from 2.75
    assert show(api, sid)["status"] == "ACTIVE"
    missing = act(api, sid, {"rebuild": {"imageRef": "11111111-2222-3333-4444-555555555555"}})
    assert missing.status_code == 400
    assert act(api, sid, {"rebuild": {}}).status_code == 400
    # a stopped server stays stopped
    assert act(api, sid, {"os-stop": None}).status_code == 202
    assert act(api, sid, {"rebuild": {"imageRef": CIRROS}}).status_code == 202
    assert show(api, sid)["status"] == "SHUTOFF"


def test_create_image_per_microversion(api):
    sid = _server(api)["id"]
    r = act(api, sid, {"createImage": {"name": "snap", "metadata": {"purpose": "test"}}})
    assert r.status_code == 202
    image_id = r.json()["image_id"]
    image = api.get(f"/image/v2/images/{image_id}", user="demo").json()
    assert image["name"] == "snap" and image["status"] == "active"
    assert image["instance_uuid"] == sid and image["purpose"] == "test"
    r = act(api, sid, {"createImage": {"name": "snap2"}}, version="2.44")
    assert r.status_code == 202 and not r.content
    location = r.headers["Location"]
    assert api.get(urlsplit(location).path, user="demo").json()["name"] == "snap2"
    assert act(api, sid, {"createImage": {}}).status_code == 400


def test_console_output_and_remote_consoles(api):
    sid = _server(api)["id"]
    r = act(api, sid, {"os-getConsoleOutput": {"length": None}})
    assert r.status_code == 200 and "login:" in r.json()["output"]
    r = act(api, sid, {"os-getConsoleOutput": {"length": 2}})
    assert len(r.json()["output"].splitlines()) == 2
    assert act(api, sid, {"os-getConsoleOutput": {"length": "x"}}).status_code == 400
    r = api.post(f"/compute/v2.1/servers/{sid}/remote-consoles", user="demo",
                 headers=mv(MAX), json={"remote_console": {"protocol": "vnc",
                                                           "type": "novnc"}})
    assert r.status_code == 200, r.text
    console = r.json()["remote_console"]
    assert console["protocol"] == "vnc" and console["type"] == "novnc"
    url = urlsplit(console["url"])
    page = api.get(f"{url.path}?{url.query}", user=None)
    assert page.status_code == 200 and sid in page.text
    assert api.get("/compute/vnc_lite.html?path=%3Ftoken%3Dbogus", user=None).status_code == 401
    r = api.post(f"/compute/v2.1/servers/{sid}/remote-consoles", user="demo",
                 headers=mv(MAX), json={"remote_console": {"protocol": "spice",
                                                           "type": "spice-html5"}})
    assert r.status_code == 501
    # the 2.1 actions, gone at 2.6
    r = act(api, sid, {"os-getVNCConsole": {"type": "novnc"}}, version="2.5")
    assert r.status_code == 200 and r.json()["console"]["type"] == "novnc"
    assert act(api, sid, {"os-getVNCConsole": {"type": "novnc"}}).status_code == 404
    assert act(api, sid, {"os-getSPICEConsole": {"type": "spice-html5"}},
               version="2.5").status_code == 501
    r = api.post(f"/compute/v2.1/servers/{sid}/remote-consoles", user="demo",
                 headers=mv("2.5"), json={"remote_console": {"protocol": "vnc",
                                                             "type": "novnc"}})
    assert r.status_code == 404


def test_trigger_crash_dump_and_diagnostics(api):
    sid = _server(api)["id"]
    assert act(api, sid, {"trigger_crash_dump": None}, version="2.16").status_code == 400
    assert act(api, sid, {"trigger_crash_dump": None}).status_code == 202
    assert last_action(api, sid)["action"] == "trigger_crash_dump"
    assert act(api, sid, {"os-stop": None}).status_code == 202
    r = act(api, sid, {"trigger_crash_dump": None})
    assert r.status_code == 409
    assert act(api, sid, {"os-start": None}).status_code == 202
    url = f"/compute/v2.1/servers/{sid}/diagnostics"
    assert api.get(url, user="demo", headers=mv(MAX)).status_code == 403
    d = api.get(url, headers=mv(MAX)).json()
    assert d["state"] == "running" and d["num_cpus"] == 1 and d["num_nics"] == 0
    assert d["memory_details"]["maximum"] == 512
    old = api.get(url, headers=mv("2.47")).json()
    assert "cpu0_time" in old and old["memory"] == 512 * 1024


def test_unknown_action_is_still_a_400(api):
    sid = _server(api)["id"]
    r = act(api, sid, {"frobnicate": None})
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == "There is no such action: frobnicate"


def test_admin_actions_backup_and_what_cannot_be_done(api):
    sid = _server(api)["id"]
    assert act(api, sid, {"os-resetState": {"state": "error"}}).status_code == 403
    assert act(api, sid, {"os-resetState": {"state": "error"}}, user="admin").status_code == 202
    assert show(api, sid)["status"] == "ERROR"
    assert act(api, sid, {"os-resetState": {"state": "bogus"}}, user="admin").status_code == 400
    assert act(api, sid, {"os-resetState": {"state": "active"}}, user="admin").status_code == 202
    for name in ("injectNetworkInfo", "resetNetwork"):
        assert act(api, sid, {name: None}, user="admin").status_code == 202
        assert last_action(api, sid)["action"] == name
    r = act(api, sid, {"changePassword": {"adminPass": "x"}})
    assert r.status_code == 501 and "Unable to set password" in r.text
    r = act(api, sid, {"forceDelete": None})
    assert r.status_code == 409 and "vm_state active" in r.text
    assert act(api, sid, {"restore": None}).status_code == 409
    for i in range(3):
        r = act(api, sid, {"createBackup": {"name": f"b{i}", "backup_type": "daily",
                                            "rotation": 2}})
        assert r.status_code == 202, r.text
    names = {i["name"] for i in api.get("/image/v2/images", user="demo").json()["images"]
             if i.get("backup_type") == "daily" and i.get("instance_uuid") == sid}
    assert names == {"b1", "b2"}
