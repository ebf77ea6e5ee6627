"""Transitional states a client can see: with a minimum action duration, a reboot shows
REBOOT (HARD_REBOOT) and a rebuild REBUILD at the client's first look after the 202, other
actions meanwhile are 409 as upstream, and the server comes back ACTIVE on its own (the
test waits on that condition, never on time)."""

from __future__ import annotations

import shutil

import pytest

from tests.api.test_compute import CIRROS, MAX, boot, mv, wait_status
from tests.conftest import make_api

SECONDS = 3.0  # long enough that the look right after the 202 falls inside it


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("transitions")
    yield from make_api(data_dir, compute={"action_min_duration": SECONDS})
    shutil.rmtree(data_dir, ignore_errors=True)


def act(api, sid, body):
    return api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv(MAX),
                    json=body)


def status(api, sid):
    return api.get(f"/compute/v2.1/servers/{sid}", user="demo", headers=mv(MAX)
                   ).json()["server"]["status"]


def test_reboot_and_rebuild_states_are_observable(slow):
    r = boot(slow, networks="none")
    sid = wait_status(slow, r.json()["server"]["id"])["id"]
    assert act(slow, sid, {"reboot": {"type": "SOFT"}}).status_code == 202
    assert status(slow, sid) == "REBOOT"
    busy = act(slow, sid, {"os-stop": None})
    assert busy.status_code == 409 and "task_state rebooting" in busy.text
    # Nova's ALLOW_REBOOT: another soft reboot waits its turn, a HARD one cuts it short
    again = act(slow, sid, {"reboot": {"type": "SOFT"}})
    assert again.status_code == 409 and "task_state rebooting" in again.text
    assert act(slow, sid, {"reboot": {"type": "HARD"}}).status_code == 202
    assert status(slow, sid) == "HARD_REBOOT"
    assert act(slow, sid, {"reboot": {"type": "HARD"}}).status_code == 202
    assert wait_status(slow, sid, statuses=("ACTIVE",))["status"] == "ACTIVE"
    assert act(slow, sid, {"reboot": {"type": "HARD"}}).status_code == 202
    assert status(slow, sid) == "HARD_REBOOT"
    wait_status(slow, sid, statuses=("ACTIVE",))
    r = act(slow, sid, {"rebuild": {"imageRef": CIRROS}})
    assert r.status_code == 202 and r.json()["server"]["status"] == "REBUILD"
    assert status(slow, sid) == "REBUILD"
    wait_status(slow, sid, statuses=("ACTIVE",))
    # a stopped server rebuilt comes back stopped
    assert act(slow, sid, {"os-stop": None}).status_code == 202
    act(slow, sid, {"rebuild": {"imageRef": CIRROS}})
    assert status(slow, sid) == "REBUILD"
    assert wait_status(slow, sid, statuses=("SHUTOFF",))["status"] == "SHUTOFF"
    # deleting a server in a transitional state is allowed, as upstream
    act(slow, sid, {"reboot": {"type": "HARD"}})
    assert slow.delete(f"/compute/v2.1/servers/{sid}", user="demo").status_code == 204


def test_a_heat_rebuild_completes_once_the_server_left_rebuild(slow):
    """Heat's server update waits out the rebuild (upstream's check_rebuild): the stack is
    UPDATE_COMPLETE only when the server is ACTIVE again."""
    from tests.api.test_orchestration import Heat, unique

    admin = slow.token("admin")
    image = slow.post("/image/v2/images", token=admin, json={
        "name": "cirros-next", "disk_format": "qcow2", "container_format": "bare",
        "visibility": "public"}).json()
    slow.put(f"/image/v2/images/{image['id']}/file", token=admin, content=b"x" * 64,
             headers={"content-type": "application/octet-stream"})
    heat = Heat(slow)
    template = {"heat_template_version": "2018-08-31", "resources": {"vm": {
        "type": "OS::Nova::Server",
        "properties": {"image": CIRROS, "flavor": "m1.tiny", "networks": []}}}}
    name = unique("rebuilt")
    assert heat.create(name, template).status_code == 201
    url = heat.url(name)
    assert heat.wait(url)["stack_status"] == "CREATE_COMPLETE"
    template["resources"]["vm"]["properties"]["image"] = "cirros-next"
    assert heat.req("PUT", url, json={"template": template}).status_code == 202
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    sid = heat.req("GET", url + "/resources/vm").json()["resource"]["physical_resource_id"]
    assert status(slow, sid) == "ACTIVE"
