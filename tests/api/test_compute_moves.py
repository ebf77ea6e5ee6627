"""Moves (in-process API): resize, cold migration with confirm/revert, live migration with
host/force/block_migration per microversion, os-migrations, /servers/{id}/migrations,
placement allocations moving with the server, port bindings following it."""

from __future__ import annotations

from tests.api.test_compute import MAX, boot, mv, wait_status
from tests.api.test_compute_actions import (
    act,
    allocations,
    show,
    unlimited,  # noqa: F401 (autouse fixture)
)

PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}


def _server(api, **kw):
    r = boot(api, user="demo", **({"networks": "none"} | kw))
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"], user="demo")["id"]


def node_of(api, host):
    rps = api.get(f"/placement/resource_providers?name={host}", headers=PLACEMENT).json()
    return rps["resource_providers"][0]["uuid"]


def migrations(api, version=MAX, **query):
    return api.get("/compute/v2.1/os-migrations", headers=mv(version),
                   params=query).json()["migrations"]


def test_cold_migrate_confirm_moves_the_allocation(api):
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    assert act(api, sid, {"migrate": None}, user="demo").status_code == 403
    assert act(api, sid, {"migrate": None}, user="admin").status_code == 202
    srv = show(api, sid)
    dest = srv["OS-EXT-SRV-ATTR:host"]
    assert srv["status"] == "VERIFY_RESIZE" and dest != source
    mig = migrations(api, instance_uuid=sid)[0]
    assert mig["migration_type"] == "migration" and mig["status"] == "finished"
    assert (mig["source_compute"], mig["dest_compute"]) == (source, dest)
    assert set(mig) >= {"uuid", "old_instance_type_id", "new_instance_type_id", "dest_host"}
    # the server holds the destination, the migration record the source
    assert list(allocations(api, sid)) == [node_of(api, dest)]
    assert list(allocations(api, mig["uuid"])) == [node_of(api, source)]
    assert act(api, sid, {"confirmResize": None}, user="demo").status_code == 204
    srv = show(api, sid)
    assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"] == dest
    assert allocations(api, mig["uuid"]) == {}
    assert migrations(api, instance_uuid=sid)[0]["status"] == "confirmed"
    r = act(api, sid, {"confirmResize": None}, user="demo")
    assert r.status_code == 409
    assert r.json()["conflictingRequest"]["message"] == (
        f"Cannot 'confirmResize' instance {sid} while it is in vm_state active")
    events = api.get(f"/compute/v2.1/servers/{sid}/os-instance-actions", headers=mv(MAX)
                     ).json()["instanceActions"]
    assert [e["action"] for e in events][:2] == ["confirmResize", "migrate"]


def test_resize_and_revert(api):
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    assert act(api, sid, {"resize": {"flavorRef": "1"}}, user="demo").status_code == 400
    assert act(api, sid, {"resize": {"flavorRef": "nope"}}, user="demo").status_code == 400
    assert act(api, sid, {"resize": {"flavorRef": "2"}}, user="demo").status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "VERIFY_RESIZE" and srv["flavor"]["original_name"] == "m1.small"
    dest = srv["OS-EXT-SRV-ATTR:host"]
    assert list(allocations(api, sid).values())[0]["resources"]["MEMORY_MB"] == 2048
    assert act(api, sid, {"revertResize": None}, user="demo").status_code == 202
    srv = show(api, sid)
    assert srv["status"] == "ACTIVE" and srv["flavor"]["original_name"] == "m1.tiny"
    assert srv["OS-EXT-SRV-ATTR:host"] == source != dest
    alloc = allocations(api, sid)
    assert list(alloc) == [node_of(api, source)]
    assert alloc[node_of(api, source)]["resources"]["MEMORY_MB"] == 512
    mig = migrations(api, instance_uuid=sid)[0]
    assert mig["migration_type"] == "resize" and mig["status"] == "reverted"
    assert allocations(api, mig["uuid"]) == {}


def test_stopped_server_comes_back_stopped(api):
    sid = _server(api)
    assert act(api, sid, {"os-stop": None}, user="demo").status_code == 202
    assert act(api, sid, {"migrate": None}, user="admin").status_code == 202
    assert show(api, sid)["status"] == "VERIFY_RESIZE"
    assert act(api, sid, {"confirmResize": None}, user="demo").status_code == 204
    assert show(api, sid)["status"] == "SHUTOFF"


def test_migrate_to_a_host(api):
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    other = next(h for h in ("compute-r1-1", "compute-r2-1") if h != source)
    r = act(api, sid, {"migrate": {"host": source}}, user="admin")
    assert r.status_code == 400 and "can't be the same" in r.json()["badRequest"]["message"]
    r = act(api, sid, {"migrate": {"host": "nowhere"}}, user="admin")
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == "Compute host nowhere could not be found."
    # before 2.56 the host is ignored
    assert act(api, sid, {"migrate": {"host": source}}, user="admin",
               version="2.55").status_code == 202
    assert act(api, sid, {"revertResize": None}, user="demo").status_code == 202
    assert act(api, sid, {"migrate": {"host": other}}, user="admin").status_code == 202
    assert show(api, sid)["OS-EXT-SRV-ATTR:host"] == other
    assert act(api, sid, {"revertResize": None}, user="demo").status_code == 202
    r = act(api, sid, {"migrate": {"host": other, "bogus": 1}}, user="admin")
    assert r.status_code == 400


def test_live_migration_per_microversion(api):
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    # 2.1: block_migration, disk_over_commit and host are required
    r = act(api, sid, {"os-migrateLive": {"host": None}}, user="admin", version="2.1")
    assert r.status_code == 400
    body = {"os-migrateLive": {"host": None, "block_migration": False,
                               "disk_over_commit": False}}
    assert act(api, sid, body, user="admin", version="2.1").status_code == 202
    srv = show(api, sid)
    first = srv["OS-EXT-SRV-ATTR:host"]
    assert srv["status"] == "ACTIVE" and first != source
    assert list(allocations(api, sid)) == [node_of(api, first)]
    mig = migrations(api, instance_uuid=sid)[0]
    assert mig["migration_type"] == "live-migration" and mig["status"] == "completed"
    # 2.25: "auto", disk_over_commit gone
    r = act(api, sid, {"os-migrateLive": {"host": None, "block_migration": "auto",
                                          "disk_over_commit": False}}, user="admin",
            version="2.25")
    assert r.status_code == 400
    r = act(api, sid, {"os-migrateLive": {"host": None, "block_migration": "auto"}},
            user="admin", version="2.25")
    assert r.status_code == 202
    # 2.30: force to a host
    target = next(h for h in ("compute-r1-1", "compute-r1-2", "compute-r2-1")
                  if h != show(api, sid)["OS-EXT-SRV-ATTR:host"])
    r = act(api, sid, {"os-migrateLive": {"host": target, "block_migration": "auto",
                                          "force": True}}, user="admin", version="2.30")
    assert r.status_code == 202
    assert show(api, sid)["OS-EXT-SRV-ATTR:host"] == target
    r = act(api, sid, {"os-migrateLive": {"host": None, "block_migration": "auto",
                                          "force": True}}, user="admin", version="2.30")
    assert r.status_code == 400
    r = act(api, sid, {"os-migrateLive": {"host": None, "block_migration": "auto",
                                          "force": True}}, user="admin", version="2.29")
    assert r.status_code == 400  # force is unknown before 2.30
    r = act(api, sid, {"os-migrateLive": {"host": target, "block_migration": "auto"}},
            user="admin")
    assert r.status_code == 400  # same host
    # in-progress live migrations: none (each completes within its request)
    url = f"/compute/v2.1/servers/{sid}/migrations"
    assert api.get(url, headers=mv(MAX)).json() == {"migrations": []}
    assert api.get(url, headers=mv("2.22")).status_code == 404
    mid = mig["id"]
    r = api.post(f"{url}/{mid}/action", headers=mv(MAX), json={"force_complete": None})
    assert r.status_code == 400 and "completed" in r.json()["badRequest"]["message"]
    assert api.delete(f"{url}/{mid}", headers=mv(MAX)).status_code == 400
    assert api.get(f"{url}/{mid}", headers=mv(MAX)).status_code == 404
    assert api.delete(f"{url}/999999", headers=mv(MAX)).status_code == 404


def test_no_valid_host_for_a_move(api):
    """Every other host disabled: before 2.34 a live migration is a 400; from 2.34 the
    failure is recorded and the server stays where it is."""
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    services = api.get("/compute/v2.1/os-services", headers=mv(MAX)).json()["services"]
    others = [s for s in services if s["host"] != source and s["binary"] == "nova-compute"]
    for s in others:
        api.put(f"/compute/v2.1/os-services/{s['id']}", headers=mv(MAX),
                json={"status": "disabled", "disabled_reason": "test"})
    try:
        body = {"os-migrateLive": {"host": None, "block_migration": "auto"}}
        r = act(api, sid, body, user="admin", version="2.33")
        assert r.status_code == 400 and "No valid host" in r.json()["badRequest"]["message"]
        assert act(api, sid, body, user="admin").status_code == 202
        srv = show(api, sid)
        assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"] == source
        assert migrations(api, instance_uuid=sid)[0]["status"] == "error"
        assert act(api, sid, {"migrate": None}, user="admin").status_code == 202
        assert show(api, sid)["status"] == "ACTIVE"
        from stackling.compute import scheduler

        with api.runtime.db.transaction() as db:
            decision = scheduler.scheduler_decision(db, sid)
        assert decision["operation"] == "migrate" and decision["chosen"] is None
        assert decision["hosts"][source].startswith("excluded")
        assert all(decision["hosts"][s["host"]] == "compute service disabled" for s in others)
    finally:
        for s in others:
            api.put(f"/compute/v2.1/os-services/{s['id']}", headers=mv(MAX),
                    json={"status": "enabled"})


def test_os_migrations_fields_and_paging(api):
    old = migrations(api, version="2.22")
    assert old and "migration_type" not in old[0] and "uuid" not in old[0]
    mid = migrations(api, version="2.23")[0]
    assert "migration_type" in mid and "uuid" not in mid
    page = api.get("/compute/v2.1/os-migrations?limit=1", headers=mv(MAX)).json()
    assert len(page["migrations"]) == 1 and "migrations_links" in page
    marker = page["migrations"][0]["uuid"]
    nxt = migrations(api, limit=1, marker=marker)
    assert nxt and nxt[0]["uuid"] != marker
    assert api.get("/compute/v2.1/os-migrations?marker=nope", headers=mv(MAX)
                   ).status_code == 400
    assert api.get("/compute/v2.1/os-migrations", user="demo", headers=mv(MAX)
                   ).status_code == 403


def test_ports_follow_the_server(api):
    net = api.post("/networking/v2.0/networks", user="demo",
                   json={"network": {"name": "movenet"}}).json()["network"]
    api.post("/networking/v2.0/subnets", user="demo", json={"subnet": {
        "network_id": net["id"], "cidr": "10.77.0.0/24", "ip_version": 4}})
    sid = _server(api, networks=[{"uuid": net["id"]}])
    ports = api.get(f"/networking/v2.0/ports?device_id={sid}").json()["ports"]
    assert ports[0]["binding:host_id"] == show(api, sid)["OS-EXT-SRV-ATTR:host"]
    ip = ports[0]["fixed_ips"][0]["ip_address"]
    body = {"os-migrateLive": {"host": None, "block_migration": "auto"}}
    assert act(api, sid, body, user="admin").status_code == 202
    host = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    port = api.get(f"/networking/v2.0/ports/{ports[0]['id']}").json()["port"]
    assert port["binding:host_id"] == host and port["fixed_ips"][0]["ip_address"] == ip
    assert act(api, sid, {"migrate": None}, user="admin").status_code == 202
    host2 = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    port = api.get(f"/networking/v2.0/ports/{ports[0]['id']}").json()["port"]
    assert port["binding:host_id"] == host2
    assert act(api, sid, {"revertResize": None}, user="demo").status_code == 202
    port = api.get(f"/networking/v2.0/ports/{ports[0]['id']}").json()["port"]
    assert port["binding:host_id"] == host
    assert show(api, sid, user="demo")["addresses"]["movenet"][0]["addr"] == ip


def test_delete_in_verify_resize_leaves_nothing(api):
    sid = _server(api)
    assert act(api, sid, {"resize": {"flavorRef": "2"}}, user="demo").status_code == 202
    mig = migrations(api, instance_uuid=sid)[0]
    assert allocations(api, mig["uuid"])
    assert api.delete(f"/compute/v2.1/servers/{sid}", user="demo").status_code == 204
    assert allocations(api, sid) == {} and allocations(api, mig["uuid"]) == {}
    assert migrations(api, instance_uuid=sid)[0]["status"] == "confirmed"
    from stackling.compute import scheduler

    with api.runtime.db.transaction() as db:
        assert scheduler.scheduler_decision(db, sid) is None


def test_evacuate_from_a_down_host(api):
    sid = _server(api)
    source = show(api, sid)["OS-EXT-SRV-ATTR:host"]
    r = act(api, sid, {"evacuate": {}}, user="admin")
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == f"Compute service of {source} is still in use."
    services = api.get("/compute/v2.1/os-services", headers=mv(MAX)).json()["services"]
    svc = next(s for s in services if s["host"] == source and s["binary"] == "nova-compute")
    url = f"/compute/v2.1/os-services/{svc['id']}"
    assert api.put(url, headers=mv(MAX), json={"forced_down": True}).status_code == 200
    try:
        assert act(api, sid, {"evacuate": {}}, user="demo").status_code == 403
        r = act(api, sid, {"evacuate": {}}, user="admin", version="2.94")
        assert r.status_code == 200 and not r.content
        srv = show(api, sid)  # active as it was (from 2.95 it would be stopped)
        assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"] != source
        assert list(allocations(api, sid)) == [node_of(api, srv["OS-EXT-SRV-ATTR:host"])]
        mig = migrations(api, instance_uuid=sid)[0]
        assert (mig["migration_type"], mig["status"]) == ("evacuation", "done")
        # 2.1 needs onSharedStorage and answers the admin password
        r = act(api, sid, {"evacuate": {}}, user="admin", version="2.13")
        assert r.status_code == 400
    finally:
        api.put(url, headers=mv(MAX), json={"forced_down": False})
