"""Small Nova fidelity fixes (issue 23): os-services lists nova-scheduler and
nova-conductor as a DevStack Nova does; the os-security-groups proxy takes an empty
description on update."""

from __future__ import annotations

from tests.api.test_compute import mv


def test_services_list_scheduler_and_conductor(api):
    services = api.get("/compute/v2.1/os-services").json()["services"]
    control = {s["binary"]: s for s in services if s["binary"] != "nova-compute"}
    assert set(control) == {"nova-scheduler", "nova-conductor"}
    for s in control.values():
        assert s["zone"] == "internal" and s["state"] == "up" and s["status"] == "enabled"
    only = api.get("/compute/v2.1/os-services?binary=nova-scheduler").json()["services"]
    assert [s["binary"] for s in only] == ["nova-scheduler"]
    # they are no computes: not hypervisors, and os-hosts names their service
    names = {h["hypervisor_hostname"] for h in api.get("/compute/v2.1/os-hypervisors"
                                                        ).json()["hypervisors"]}
    assert len(names) == len([s for s in services if s["binary"] == "nova-compute"])
    listed = api.get("/compute/v2.1/os-hosts", headers=mv("2.42")).json()["hosts"]
    assert {"scheduler", "conductor"} <= {h["service"] for h in listed}


def test_proxy_security_group_update_with_an_empty_description(api):
    old = mv("2.35")
    r = api.post("/compute/v2.1/os-security-groups", user="demo", headers=old,
                 json={"security_group": {"name": "web", "description": "d"}})
    assert r.status_code == 200, r.text
    sg = r.json()["security_group"]
    r = api.put(f"/compute/v2.1/os-security-groups/{sg['id']}", user="demo", headers=old,
                json={"security_group": {"name": "web2", "description": ""}})
    assert r.status_code == 200, r.text
    assert r.json()["security_group"]["description"] == ""
    assert r.json()["security_group"]["name"] == "web2"
    blank = api.put(f"/compute/v2.1/os-security-groups/{sg['id']}", user="demo", headers=old,
                    json={"security_group": {"name": "", "description": "x"}})
    assert blank.status_code == 400
    api.delete(f"/compute/v2.1/os-security-groups/{sg['id']}", user="demo", headers=old)
