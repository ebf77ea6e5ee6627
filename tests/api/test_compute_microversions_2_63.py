"""Compute microversions from 2.63 (in-process API): each version's request accepted or
refused below and at it, and the response shapes, as Nova's version history lists them."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from stackling.compute import microversions
from tests.api.test_compute import CIRROS, mv, wait_status
from tests.api.test_compute_actions import act, lift_quotas
from tests.api.test_compute_networks import network, new_member

SERVERS = "/compute/v2.1/servers"
GROUPS = "/compute/v2.1/os-server-groups"
CERTS = ["0b5d2c72-12cc-4ba6-a8d7-3ff5cc1d8cb8", "674736e3-f25c-405c-8362-bbf991e0ce0a"]


@pytest.fixture(scope="module", autouse=True)
def unlimited(api):
    lift_quotas(api)


def boot(api, version, user="demo", hints=None, **server):
    body: dict = {"server": {"name": "vm", "flavorRef": "1", "imageRef": CIRROS,
                             "networks": "none", **server}}
    if hints:
        body["os:scheduler_hints"] = hints
    return api.post(SERVERS, user=user, headers=mv(version), json=body)


def active(api, r, user="demo") -> dict:
    assert r.status_code == 202, r.text
    server = wait_status(api, r.json()["server"]["id"], user=user)
    assert server["status"] == "ACTIVE", server.get("fault")
    return server


def show(api, sid, version, user="demo") -> dict:
    r = api.get(f"{SERVERS}/{sid}", user=user, headers=mv(version))
    assert r.status_code == 200, r.text
    return r.json()["server"]


def test_every_row_from_2_63_has_its_readme_section():
    readme = (Path(microversions.__file__).parent / "README.md").read_text()
    documented = set(re.findall(r"^- \*\*(2\.\d+)\*\*", readme, re.M))
    rows = [v for v, _ in microversions.HISTORY if int(v.split(".")[1]) >= 63]
    assert rows and [v for v in rows if v not in documented] == []


def test_2_63_trusted_image_certificates(api):
    below = boot(api, "2.62", trusted_image_certificates=CERTS)
    assert below.status_code == 400 and "trusted_image_certificates" in below.text
    for bad in ([], ["a", "a"], [""], [f"c{i}" for i in range(51)], "x"):
        r = boot(api, "2.63", trusted_image_certificates=bad)
        assert r.status_code == 400, bad
    sid = active(api, boot(api, "2.63", trusted_image_certificates=CERTS))["id"]
    assert show(api, sid, "2.63")["trusted_image_certificates"] == CERTS
    assert "trusted_image_certificates" not in show(api, sid, "2.62")
    listed = api.get(f"{SERVERS}/detail", user="demo", headers=mv("2.63")).json()["servers"]
    assert next(s for s in listed if s["id"] == sid)["trusted_image_certificates"] == CERTS
    plain = active(api, boot(api, "2.63"))["id"]
    assert show(api, plain, "2.63")["trusted_image_certificates"] is None
    # rebuild: the certificates replace the old ones; null forgets them
    r = act(api, sid, {"rebuild": {"imageRef": CIRROS,
                                   "trusted_image_certificates": CERTS[:1]}}, version="2.63")
    assert r.status_code == 202 and r.json()["server"]["trusted_image_certificates"] == CERTS[:1]
    r = act(api, sid, {"rebuild": {"imageRef": CIRROS,
                                   "trusted_image_certificates": CERTS}}, version="2.62")
    assert r.status_code == 400
    wait_status(api, sid)
    r = act(api, sid, {"rebuild": {"imageRef": CIRROS, "trusted_image_certificates": None}},
            version="2.63")
    assert r.status_code == 202 and r.json()["server"]["trusted_image_certificates"] is None
    wait_status(api, sid)
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.63"),
                      json={"server": {"name": "renamed"}}).json()["server"]
    assert updated["trusted_image_certificates"] is None
    for s in (sid, plain):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204


def test_2_64_server_group_policy_and_rules(api):
    old = api.post(GROUPS, user="demo", headers=mv("2.64"),
                   json={"server_group": {"name": "g", "policies": ["anti-affinity"]}})
    assert old.status_code == 400
    new_below = api.post(GROUPS, user="demo", headers=mv("2.63"),
                         json={"server_group": {"name": "g", "policy": "anti-affinity"}})
    assert new_below.status_code == 400
    rules_on_affinity = api.post(GROUPS, user="demo", headers=mv("2.64"), json={
        "server_group": {"name": "g", "policy": "affinity",
                         "rules": {"max_server_per_host": 2}}})
    assert rules_on_affinity.status_code == 400
    assert "Only anti-affinity policy supports rules." in rules_on_affinity.text
    for bad in ({"max_server_per_host": 0}, {"other": 1}):
        r = api.post(GROUPS, user="demo", headers=mv("2.64"), json={
            "server_group": {"name": "g", "policy": "anti-affinity", "rules": bad}})
        assert r.status_code == 400, bad
    r = api.post(GROUPS, user="demo", headers=mv("2.64"), json={
        "server_group": {"name": "two-per-host", "policy": "anti-affinity",
                         "rules": {"max_server_per_host": "2"}}})
    assert r.status_code == 200, r.text
    group = r.json()["server_group"]
    assert group["policy"] == "anti-affinity" and group["rules"] == {"max_server_per_host": 2}
    assert "policies" not in group and "metadata" not in group
    shown = api.get(f"{GROUPS}/{group['id']}", user="demo", headers=mv("2.63")).json()
    assert shown["server_group"]["policies"] == ["anti-affinity"]
    # the rule holds at boot: two members per host, no third
    hosts = {h["hypervisor_hostname"] for h in api.get("/compute/v2.1/os-hypervisors"
                                                        ).json()["hypervisors"]}
    sids = [active(api, boot(api, "2.64", hints={"group": group["id"]}))["id"]
            for _ in range(2 * len(hosts))]
    per_host: dict[str, int] = {}
    for sid in sids:
        host = show(api, sid, "2.64", user="admin")["OS-EXT-SRV-ATTR:host"]
        per_host[host] = per_host.get(host, 0) + 1
    assert per_host == {h: 2 for h in per_host} and len(per_host) == len(hosts)
    extra = boot(api, "2.64", hints={"group": group["id"]})
    failed = wait_status(api, extra.json()["server"]["id"])
    assert failed["status"] == "ERROR" and "No valid host" in failed["fault"]["message"]
    for sid in [*sids, failed["id"]]:
        assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204
    assert api.delete(f"{GROUPS}/{group['id']}", user="demo").status_code == 204


def test_2_66_changes_before(api):
    sid = active(api, boot(api, "2.66"))["id"]
    updated = show(api, sid, "2.66")["updated"]
    later = (dt.datetime.fromisoformat(updated.replace("Z", "+00:00"))
             + dt.timedelta(seconds=5)).isoformat()

    def ids(version, query):
        r = api.get(f"{SERVERS}?{query}", user="demo", headers=mv(version))
        assert r.status_code == 200, r.text
        return [s["id"] for s in r.json()["servers"]]

    assert sid not in ids("2.66", "changes-before=2000-01-01T00:00:00Z")
    assert sid in ids("2.65", "changes-before=2000-01-01T00:00:00Z")  # ignored below 2.66
    assert sid in ids("2.66", f"changes-before={later.replace('+00:00', 'Z')}")
    inverted = api.get(f"{SERVERS}?changes-since=2020-01-02T00:00:00Z&"
                       "changes-before=2020-01-01T00:00:00Z", user="demo", headers=mv("2.66"))
    assert inverted.status_code == 400
    assert "changes-since must be less than or equal to changes-before" in inverted.text
    actions = f"{SERVERS}/{sid}/os-instance-actions"
    early = api.get(f"{actions}?changes-before=2000-01-01T00:00:00Z", user="demo",
                    headers=mv("2.66")).json()["instanceActions"]
    assert early == []
    assert api.get(f"{actions}?changes-before=2000-01-01T00:00:00Z", user="demo",
                   headers=mv("2.65")).json()["instanceActions"] != []
    migrations = api.get("/compute/v2.1/os-migrations?changes-since=2020-01-02T00:00:00Z&"
                         "changes-before=2020-01-01T00:00:00Z", headers=mv("2.66"))
    assert migrations.status_code == 400
    assert api.get("/compute/v2.1/os-migrations?changes-before=2000-01-01T00:00:00Z",
                   headers=mv("2.66")).json()["migrations"] == []
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_67_block_device_mapping_volume_type(api):
    bdm = [{"boot_index": 0, "uuid": CIRROS, "source_type": "image",
            "destination_type": "volume", "volume_size": 1, "volume_type": "lvm"}]
    below = boot(api, "2.66", block_device_mapping_v2=bdm, imageRef="")
    assert below.status_code == 400
    assert "Additional properties are not allowed ('volume_type' was unexpected)" in below.text
    at = boot(api, "2.67", block_device_mapping_v2=bdm, imageRef="")
    # accepted by the schema, then checked against the volume types the user may see
    assert at.status_code == 400 and "Volume type lvm could not be found." in at.text, at.text
    bdm[0]["volume_type"] = "__DEFAULT__"
    server = active(api, boot(api, "2.67", block_device_mapping_v2=bdm, imageRef=""))
    assert api.delete(f"{SERVERS}/{server['id']}", user="demo").status_code == 204


def test_2_68_force_removed_from_live_migrate_and_evacuate(api):
    sid = active(api, boot(api, "2.68"))["id"]
    for version, expect_schema_error in (("2.67", False), ("2.68", True)):
        r = act(api, sid, {"os-migrateLive": {"host": None, "block_migration": "auto",
                                              "force": False}}, user="admin", version=version)
        assert (r.status_code == 400 and "force" in r.text) is expect_schema_error, r.text
        wait_status(api, sid)
    r = act(api, sid, {"evacuate": {"force": False}}, user="admin", version="2.68")
    assert r.status_code == 400 and "Additional properties are not allowed" in r.text
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_70_interface_tags(api):
    user = new_member(api)
    net = network(api, user, cidr="192.168.70.0/24")
    r = boot(api, "2.70", user=user, networks=[{"uuid": net, "tag": "boot-nic"}])
    sid = active(api, r, user=user)["id"]
    url = f"{SERVERS}/{sid}/os-interface"
    listed = api.get(url, user=user, headers=mv("2.70")).json()["interfaceAttachments"]
    assert [i["tag"] for i in listed] == ["boot-nic"]
    assert "tag" not in api.get(url, user=user, headers=mv("2.69")).json()[
        "interfaceAttachments"][0]
    attached = api.post(url, user=user, headers=mv("2.70"), json={
        "interfaceAttachment": {"net_id": net, "tag": "hot"}})
    assert attached.status_code == 200, attached.text
    port = attached.json()["interfaceAttachment"]
    assert port["tag"] == "hot"
    shown = api.get(f"{url}/{port['port_id']}", user=user, headers=mv("2.70")).json()
    assert shown["interfaceAttachment"]["tag"] == "hot"
    untagged = api.post(url, user=user, headers=mv("2.70"),
                        json={"interfaceAttachment": {"net_id": net}}).json()
    assert untagged["interfaceAttachment"]["tag"] is None
    assert api.delete(f"{SERVERS}/{sid}", user=user).status_code == 204


def test_2_71_server_groups_in_show_update_rebuild(api):
    group = api.post(GROUPS, user="demo", headers=mv("2.64"), json={
        "server_group": {"name": "g71", "policy": "soft-affinity"}}).json()["server_group"]
    sid = active(api, boot(api, "2.71", hints={"group": group["id"]}))["id"]
    plain = active(api, boot(api, "2.71"))["id"]
    assert show(api, sid, "2.71")["server_groups"] == [group["id"]]
    assert show(api, plain, "2.71")["server_groups"] == []
    assert "server_groups" not in show(api, sid, "2.70")
    listed = api.get(f"{SERVERS}/detail", user="demo", headers=mv("2.71")).json()["servers"]
    assert all("server_groups" not in s for s in listed)
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.71"),
                      json={"server": {"name": "n"}}).json()["server"]
    assert updated["server_groups"] == [group["id"]]
    rebuilt = act(api, sid, {"rebuild": {"imageRef": CIRROS}}, version="2.71")
    assert rebuilt.json()["server"]["server_groups"] == [group["id"]]
    wait_status(api, sid)
    for s in (sid, plain):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204
    assert api.delete(f"{GROUPS}/{group['id']}", user="demo").status_code == 204


def test_2_72_ports_with_a_resource_request(api, monkeypatch):
    from stackling.network import interface as net_iface

    user = new_member(api)
    network_id = network(api, user, cidr="192.168.72.0/24")
    ports = [api.post("/networking/v2.0/ports", user=user, json={"port": {
        "network_id": network_id}}).json()["port"]["id"] for _ in range(2)]
    # as a port with a QoS minimum-bandwidth policy answers (the groups are the
    # scheduler's business, not this check's)
    real = net_iface.port_resource_request
    monkeypatch.setattr(net_iface, "port_resource_request", lambda db, port_id: (
        {"request_groups": [], "same_subtree": []} if port_id in ports
        else real(db, port_id)))
    below = boot(api, "2.71", user=user, networks=[{"port": ports[0]}])
    assert below.status_code == 400
    assert "not supported until microversion 2.72" in below.text
    sid = active(api, boot(api, "2.72", user=user, networks=[{"port": ports[1]}]), user=user)
    assert api.delete(f"{SERVERS}/{sid['id']}", user=user).status_code == 204


def test_2_73_lock_reason_and_locked_filter(api):
    sid = active(api, boot(api, "2.73"))["id"]
    other = active(api, boot(api, "2.73"))["id"]
    for bad in ({"lock": {"locked_reason": ""}}, {"lock": {"reason": "x"}},
                {"lock": {"locked_reason": "x" * 256}}):
        assert act(api, sid, bad, version="2.73").status_code == 400, bad
    # below 2.73 the lock body is not looked at (and no reason is kept)
    assert act(api, sid, {"lock": {"locked_reason": "ignored"}}, version="2.72").status_code == 202
    assert show(api, sid, "2.73")["locked_reason"] is None
    assert act(api, sid, {"unlock": None}, version="2.73").status_code == 202
    assert act(api, sid, {"lock": {"locked_reason": "maintenance"}},
               version="2.73").status_code == 202
    shown = show(api, sid, "2.73")
    assert shown["locked"] is True and shown["locked_reason"] == "maintenance"
    assert "locked_reason" not in show(api, sid, "2.72")
    assert act(api, other, {"lock": None}, version="2.73").status_code == 202
    assert show(api, other, "2.73")["locked_reason"] is None

    def ids(version, query):
        r = api.get(f"{SERVERS}/detail?{query}", user="demo", headers=mv(version))
        assert r.status_code == 200, r.text
        return [s["id"] for s in r.json()["servers"]]

    assert act(api, other, {"unlock": None}, version="2.73").status_code == 202
    assert sid in ids("2.73", "locked=true") and other not in ids("2.73", "locked=true")
    assert other in ids("2.73", "locked=False") and sid not in ids("2.73", "locked=0")
    assert {sid, other} <= set(ids("2.72", "locked=true"))  # no such filter before 2.73
    bad = api.get(f"{SERVERS}?locked=maybe", user="demo", headers=mv("2.73"))
    assert bad.status_code == 400 and "Unrecognized value 'maybe'" in bad.text
    by_lock = ids("2.73", "sort_key=locked&sort_dir=desc")
    assert by_lock.index(sid) < by_lock.index(other)
    assert ids("2.72", "sort_key=locked")  # ignored, not refused, before 2.73
    # the update and rebuild bodies carry it too; unlock forgets it
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.73"),
                      json={"server": {"name": "n"}}).json()["server"]
    assert updated["locked_reason"] == "maintenance"
    assert act(api, sid, {"unlock": None}, version="2.73").status_code == 202
    assert show(api, sid, "2.73")["locked_reason"] is None
    for s in (sid, other):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204


def test_2_74_host_and_hypervisor_hostname_on_create(api):
    nodes = api.get("/compute/v2.1/os-hypervisors/detail", headers=mv("2.53")).json()[
        "hypervisors"]
    node = nodes[-1]
    host, hostname = node["service"]["host"], node["hypervisor_hostname"]
    below = boot(api, "2.73", user="admin", host=host)
    assert below.status_code == 400 and "'host' was unexpected" in below.text
    refused = boot(api, "2.74", host=host)
    assert refused.status_code == 403
    assert "compute:servers:create:requested_destination" in refused.text
    missing = boot(api, "2.74", user="admin", host="no-such-host")
    assert missing.status_code == 400
    assert "Compute host no-such-host could not be found." in missing.text
    both = boot(api, "2.74", user="admin", host=host, availability_zone=f"nova:{host}")
    assert both.status_code == 400 and "mutually exclusive" in both.text
    wrong_pair = boot(api, "2.74", user="admin", host=host, hypervisor_hostname="nope")
    assert wrong_pair.status_code == 400
    sids = [active(api, boot(api, "2.74", user="admin", **kw), user="admin")["id"]
            for kw in ({"host": host}, {"hypervisor_hostname": hostname},
                       {"host": host, "hypervisor_hostname": hostname})]
    for sid in sids:
        assert show(api, sid, "2.74", user="admin")["OS-EXT-SRV-ATTR:host"] == host
        assert api.delete(f"{SERVERS}/{sid}", user="admin").status_code == 204


def test_2_75_unknown_query_parameters_and_full_bodies(api):
    for url in (f"{SERVERS}", f"{SERVERS}/detail", "/compute/v2.1/flavors",
                "/compute/v2.1/flavors/detail", "/compute/v2.1/os-keypairs",
                "/compute/v2.1/limits", "/compute/v2.1/os-server-groups"):
        assert api.get(f"{url}?bogus=1", user="demo", headers=mv("2.74")).status_code == 200
        r = api.get(f"{url}?bogus=1", user="demo", headers=mv("2.75"))
        assert r.status_code == 400, url
        assert "Additional properties are not allowed ('bogus' was unexpected)" in r.text
    for url in ("/compute/v2.1/os-services", "/compute/v2.1/os-simple-tenant-usage"):
        assert api.get(f"{url}?bogus=1", headers=mv("2.75")).status_code == 400
        assert api.get(f"{url}?bogus=1", headers=mv("2.74")).status_code == 200
    demo = api.get("/identity/v3/auth/projects", user="demo").json()["projects"][0]["id"]
    quota = f"/compute/v2.1/os-quota-sets/{demo}"
    assert api.get(f"{quota}?bogus=1", headers=mv("2.75")).status_code == 400
    assert api.get(f"{quota}?user_id=x", headers=mv("2.75")).status_code == 200
    # known parameters still pass, and the sort keys Nova ignored are refused from 2.75
    assert api.get(f"{SERVERS}?name=x&limit=1&changes-before=2030-01-01T00:00:00Z",
                   user="demo", headers=mv("2.75")).status_code == 200
    assert api.get(f"{SERVERS}?sort_key=id", user="demo", headers=mv("2.74")).status_code == 200
    assert api.get(f"{SERVERS}?sort_key=id", user="demo", headers=mv("2.75")).status_code == 400
    # update and rebuild answer the whole server, as GET shows it
    sid = active(api, boot(api, "2.75"))["id"]
    got = show(api, sid, "2.75")
    old = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.74"),
                  json={"server": {"name": "n"}}).json()["server"]
    assert "OS-EXT-STS:vm_state" not in old and "key_name" not in old
    new = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.75"),
                  json={"server": {"name": "n"}}).json()["server"]
    assert set(new) == set(got) | {"server_groups"}
    rebuilt = act(api, sid, {"rebuild": {"imageRef": CIRROS}}, version="2.75").json()["server"]
    assert {"OS-EXT-STS:vm_state", "OS-EXT-AZ:availability_zone", "config_drive",
            "OS-SRV-USG:launched_at", "adminPass"} <= set(rebuilt)
    wait_status(api, sid)
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204
    # flavors: swap 0, not "", from 2.75
    flavor = api.get("/compute/v2.1/flavors/1", headers=mv("2.74")).json()["flavor"]
    assert flavor["swap"] == ""
    assert api.get("/compute/v2.1/flavors/1", headers=mv("2.75")).json()["flavor"]["swap"] == 0
    # hypervisors with_servers: `servers` always there from 2.75
    empty = [h for h in api.get("/compute/v2.1/os-hypervisors?with_servers=true",
                                headers=mv("2.75")).json()["hypervisors"]]
    assert all("servers" in h for h in empty)


def test_2_77_unshelve_into_an_availability_zone(api):
    sid = active(api, boot(api, "2.77"))["id"]
    assert act(api, sid, {"shelve": None}, version="2.77").status_code == 202
    assert wait_status(api, sid, statuses=("SHELVED_OFFLOADED",))["status"] == \
        "SHELVED_OFFLOADED"
    below = act(api, sid, {"unshelve": {"availability_zone": "nova"}}, version="2.76")
    assert below.status_code == 400
    nowhere = act(api, sid, {"unshelve": {"availability_zone": "atlantis"}}, version="2.77")
    assert nowhere.status_code == 400
    assert "The requested availability zone is not available" in nowhere.text
    extra = act(api, sid, {"unshelve": {"host": "x"}}, version="2.77")
    assert extra.status_code == 400
    r = act(api, sid, {"unshelve": {"availability_zone": "nova"}}, version="2.77")
    assert r.status_code == 202, r.text
    server = wait_status(api, sid)
    assert server["status"] == "ACTIVE" and server["OS-EXT-AZ:availability_zone"] == "nova"
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_78_topology(api):
    sid = active(api, boot(api, "2.78"))["id"]
    url = f"{SERVERS}/{sid}/topology"
    assert api.get(url, user="demo", headers=mv("2.77")).status_code == 404
    r = api.get(url, user="demo", headers=mv("2.78"))
    assert r.status_code == 200 and r.json() == {"nodes": [], "pagesize_kb": None}
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_80_migration_owner_fields_and_filters(api):
    sid = active(api, boot(api, "2.80"))["id"]
    assert act(api, sid, {"migrate": None}, user="admin", version="2.80").status_code == 202
    wait_status(api, sid, statuses=("VERIFY_RESIZE", "ACTIVE", "ERROR"))
    demo = api.get("/identity/v3/auth/projects", user="demo").json()["projects"][0]["id"]
    url = "/compute/v2.1/os-migrations"
    mine = [m for m in api.get(f"{url}?instance_uuid={sid}", headers=mv("2.80")).json()[
        "migrations"]]
    assert mine and mine[0]["project_id"] == demo and mine[0]["user_id"]
    assert "project_id" not in api.get(f"{url}?instance_uuid={sid}", headers=mv("2.79")
                                       ).json()["migrations"][0]
    by_project = api.get(f"{url}?project_id={demo}", headers=mv("2.80")).json()["migrations"]
    assert sid in {m["instance_uuid"] for m in by_project}
    other = api.get(f"{url}?project_id=nobody", headers=mv("2.80")).json()["migrations"]
    assert other == []
    by_user = api.get(f"{url}?user_id={mine[0]['user_id']}", headers=mv("2.80")).json()
    assert sid in {m["instance_uuid"] for m in by_user["migrations"]}
    act(api, sid, {"confirmResize": None}, user="admin")
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_81_aggregate_image_cache(api):
    agg = api.post("/compute/v2.1/os-aggregates", json={"aggregate": {"name": "cache81"}}
                   ).json()["aggregate"]
    url = f"/compute/v2.1/os-aggregates/{agg['id']}/images"
    body = {"cache": [{"id": CIRROS}]}
    assert api.post(url, headers=mv("2.80"), json=body).status_code == 404
    assert api.post(url, headers=mv("2.81"), json=body).status_code == 202
    assert api.post(url, user="demo", headers=mv("2.81"), json=body).status_code == 403
    dup = api.post(url, headers=mv("2.81"), json={"cache": [{"id": CIRROS}, {"id": CIRROS}]})
    assert dup.status_code == 400 and "Duplicate images in request" in dup.text
    assert api.post(url, headers=mv("2.81"), json={"cache": []}).status_code == 400
    assert api.post("/compute/v2.1/os-aggregates/99999/images", headers=mv("2.81"),
                    json=body).status_code == 404
    assert api.delete(f"/compute/v2.1/os-aggregates/{agg['id']}").status_code == 200


def test_2_83_more_filters_for_non_admins(api):
    key = api.post("/compute/v2.1/os-keypairs", user="demo", headers=mv("2.83"), json={
        "keypair": {"name": "k83"}})
    assert key.status_code in (200, 201), key.text
    keyed = active(api, boot(api, "2.83", key_name="k83"))["id"]
    plain = active(api, boot(api, "2.83"))["id"]
    assert act(api, plain, {"os-stop": None}, version="2.83").status_code == 202
    wait_status(api, plain, statuses=("SHUTOFF",))

    def ids(version, query, user="demo"):
        r = api.get(f"{SERVERS}?{query}", user=user, headers=mv(version))
        assert r.status_code == 200, r.text
        return {s["id"] for s in r.json()["servers"]}

    assert keyed in ids("2.83", "key_name=k83") and plain not in ids("2.83", "key_name=k83")
    assert {keyed, plain} <= ids("2.82", "key_name=k83")  # ignored for non-admins before
    assert plain not in ids("2.82", "all_tenants=1&key_name=k83", user="admin")
    assert plain in ids("2.83", "vm_state=stopped") and keyed not in ids("2.83", "vm_state=stopped")
    assert keyed in ids("2.83", "power_state=1") and plain not in ids("2.83", "power_state=1")
    assert {keyed, plain} <= ids("2.83", "availability_zone=nova")
    assert ids("2.83", "availability_zone=atlantis") == set()
    assert ids("2.83", "terminated_at=2") == set()
    year = show(api, keyed, "2.83")["created"][:4]
    assert keyed in ids("2.83", f"created_at={year}-")
    me = show(api, keyed, "2.83")["user_id"]
    assert keyed in ids("2.83", f"user_id={me}") and ids("2.83", "user_id=nobody") == set()
    for s in (keyed, plain):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204
    api.delete("/compute/v2.1/os-keypairs/k83", user="demo")


def test_2_84_event_details(api):
    # m1.xlarge fits no host: the build fails, its event carries the fault message
    failed = wait_status(api, boot(api, "2.84", flavorRef="5").json()["server"]["id"])
    assert failed["status"] == "ERROR"
    url = f"{SERVERS}/{failed['id']}/os-instance-actions"
    request_id = api.get(url, user="demo", headers=mv("2.84")).json()["instanceActions"][0][
        "request_id"]
    events = api.get(f"{url}/{request_id}", headers=mv("2.84")).json()["instanceAction"][
        "events"]
    errors = [e["details"] for e in events if e["result"] == "Error"]
    assert errors and all("No valid host was found" in d for d in errors)
    older = api.get(f"{url}/{request_id}", headers=mv("2.83")).json()
    assert all("details" not in e for e in older["instanceAction"]["events"])
    member = api.get(f"{url}/{request_id}", user="demo", headers=mv("2.84")).json()
    assert all("details" not in e for e in member["instanceAction"]["events"])
    ok = active(api, boot(api, "2.84"))["id"]
    url = f"{SERVERS}/{ok}/os-instance-actions"
    request_id = api.get(url, user="demo", headers=mv("2.84")).json()["instanceActions"][0][
        "request_id"]
    events = api.get(f"{url}/{request_id}", headers=mv("2.84")).json()["instanceAction"][
        "events"]
    assert events and all(e["details"] is None for e in events)
    for sid in (failed["id"], ok):
        assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


@pytest.mark.parametrize("key,value,message", [
    ("hw:cpu_policy", "bogus", "'bogus' is not one of: dedicated, shared, mixed."),
    ("hw:numa_nodes", "0", "'0' is less than the min value of '1'."),
    ("hw:numa_nodes", "two", "'two' is not a valid integer value."),
    ("hw:boot_menu", "maybe", "'maybe' is not a valid boolean-like value."),
    ("hw:no_such_thing", "1", "extra spec 'hw:no_such_thing' does not appear to be a valid"),
    ("trait:HW_CPU_X86_AVX2", "wanted", "'wanted' is not one of: required, forbidden."),
    ("resources1:CUSTOM_GPU", "many", "'many' is not a valid integer value."),
])
def test_2_86_known_extra_specs_are_validated(api, key, value, message):
    flavor = api.post("/compute/v2.1/flavors", json={"flavor": {
        "name": f"f86-{key}-{value}", "ram": 64, "vcpus": 1, "disk": 1}}).json()["flavor"]
    url = f"/compute/v2.1/flavors/{flavor['id']}/os-extra_specs"
    r = api.post(url, headers=mv("2.86"), json={"extra_specs": {key: value}})
    assert r.status_code == 400 and message in r.text
    put = api.put(f"{url}/{key}", headers=mv("2.86"), json={key: value})
    assert put.status_code == 400 and message in put.text
    assert api.post(url, headers=mv("2.85"), json={"extra_specs": {key: value}}
                    ).status_code == 200  # not checked before 2.86
    good = {"hw:cpu_policy": "dedicated", "hw:numa_nodes": 2, "trait:HW_CPU_X86_AVX2":
            "required", "resources1:CUSTOM_GPU": "1", "my:own": "anything", "plain": "x",
            "hw:boot_menu": True}
    r = api.post(url, headers=mv("2.86"), json={"extra_specs": good})
    assert r.status_code == 200, r.text
    assert api.delete(f"/compute/v2.1/flavors/{flavor['id']}").status_code == 202


def test_2_88_hypervisor_bodies(api):
    detail = api.get("/compute/v2.1/os-hypervisors/detail", headers=mv("2.88")).json()[
        "hypervisors"][0]
    assert "vcpus" not in detail and "cpu_info" not in detail and "running_vms" not in detail
    assert detail["uptime"] and detail["hypervisor_type"] and detail["service"]["host"]
    old = api.get("/compute/v2.1/os-hypervisors/detail", headers=mv("2.87")).json()[
        "hypervisors"][0]
    assert "vcpus" in old and "uptime" not in old
    shown = api.get(f"/compute/v2.1/os-hypervisors/{detail['id']}", headers=mv("2.88")).json()
    assert "memory_mb" not in shown["hypervisor"] and shown["hypervisor"]["uptime"]
    for path in ("statistics", f"{detail['id']}/uptime"):
        assert api.get(f"/compute/v2.1/os-hypervisors/{path}", headers=mv("2.88")
                       ).status_code == 404
        assert api.get(f"/compute/v2.1/os-hypervisors/{path}", headers=mv("2.87")
                       ).status_code == 200


def test_2_90_hostname(api):
    below = boot(api, "2.89", hostname="web-01")
    assert below.status_code == 400 and "'hostname' was unexpected" in below.text
    for bad in ("-web", "a", "web.example.com", "x" * 64):
        assert boot(api, "2.90", hostname=bad).status_code == 400, bad
    several = boot(api, "2.90", hostname="web-01", min_count=2)
    assert several.status_code == 400
    assert "Unable to allocate a single hostname to multiple instances" in several.text
    sid = active(api, boot(api, "2.90", name="My Server", hostname="web-01"))["id"]
    assert show(api, sid, "2.90")["OS-EXT-SRV-ATTR:hostname"] == "web-01"  # a member sees it
    assert "OS-EXT-SRV-ATTR:hostname" not in show(api, sid, "2.89")
    listed = api.get(f"{SERVERS}?hostname=^web-0", user="demo", headers=mv("2.90")).json()
    assert [s["id"] for s in listed["servers"]] == [sid]
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.90"),
                      json={"server": {"hostname": "web-02"}})
    assert updated.status_code == 200
    assert updated.json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "web-02"
    assert api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.89"),
                   json={"server": {"hostname": "web-03"}}).status_code == 400
    rebuilt = act(api, sid, {"rebuild": {"imageRef": CIRROS, "hostname": "web-04"}},
                  version="2.90")
    assert rebuilt.status_code == 202
    assert rebuilt.json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "web-04"
    wait_status(api, sid)
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_91_unshelve_to_a_host_and_unpin(api):
    nodes = api.get("/compute/v2.1/os-hypervisors/detail", headers=mv("2.53")).json()[
        "hypervisors"]
    target = nodes[-1]["service"]["host"]
    sid = active(api, boot(api, "2.91", availability_zone="nova"))["id"]
    assert show(api, sid, "2.96")["pinned_availability_zone"] == "nova"

    def shelve():
        assert act(api, sid, {"shelve": None}, version="2.91").status_code == 202
        wait_status(api, sid, statuses=("SHELVED_OFFLOADED",))

    shelve()
    assert act(api, sid, {"unshelve": {"host": target}}, version="2.90",
               user="admin").status_code == 400
    refused = act(api, sid, {"unshelve": {"host": target}}, version="2.91")
    assert refused.status_code == 403
    missing = act(api, sid, {"unshelve": {"host": "no-such-host"}}, version="2.91",
                  user="admin")
    assert missing.status_code == 400 and "could not be found" in missing.text
    r = act(api, sid, {"unshelve": {"host": target}}, version="2.91", user="admin")
    assert r.status_code == 202, r.text
    server = wait_status(api, sid)
    assert server["status"] == "ACTIVE"
    assert show(api, sid, "2.91", user="admin")["OS-EXT-SRV-ATTR:host"] == target
    shelve()
    assert act(api, sid, {"unshelve": {"availability_zone": None}}, version="2.91"
               ).status_code == 202
    wait_status(api, sid)
    assert show(api, sid, "2.96")["pinned_availability_zone"] is None
    # not offloaded: a zone or a host is a 409
    assert act(api, sid, {"unshelve": {"availability_zone": None}}, version="2.91"
               ).status_code == 409
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_92_keypairs_import_only(api):
    url = "/compute/v2.1/os-keypairs"
    generated = api.post(url, user="demo", headers=mv("2.92"), json={"keypair": {"name": "g92"}})
    assert generated.status_code == 400 and "'public_key' is a required property" in generated.text
    public = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmOKV1A6Ub6sWl2UbW3mtxS+mKZlRiTeS0sLAyE"
              "hD0f demo@example")
    r = api.post(url, user="demo", headers=mv("2.92"),
                 json={"keypair": {"name": "me@host.92", "public_key": public}})
    assert r.status_code == 201, r.text
    assert api.post(url, user="demo", headers=mv("2.91"), json={
        "keypair": {"name": "me@host.91", "public_key": public}}).status_code == 400
    assert api.get(f"{url}/me@host.92", user="demo").status_code == 200
    assert api.delete(f"{url}/me@host.92", user="demo").status_code in (202, 204)


def test_2_94_fqdn_hostname(api):
    assert boot(api, "2.93", hostname="web.example.com").status_code == 400
    sid = active(api, boot(api, "2.94", hostname="web.example.com"))["id"]
    assert show(api, sid, "2.94")["OS-EXT-SRV-ATTR:hostname"] == "web.example.com"
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_95_evacuated_servers_are_stopped(api):
    sid = active(api, boot(api, "2.95"))["id"]
    source = show(api, sid, "2.95", user="admin")["OS-EXT-SRV-ATTR:host"]
    services = api.get("/compute/v2.1/os-services", headers=mv("2.53")).json()["services"]
    svc = next(s for s in services if s["host"] == source and s["binary"] == "nova-compute")
    url = f"/compute/v2.1/os-services/{svc['id']}"
    assert api.put(url, headers=mv("2.53"), json={"forced_down": True}).status_code == 200
    try:
        r = act(api, sid, {"evacuate": {}}, user="admin", version="2.95")
        assert r.status_code == 200, r.text
        server = show(api, sid, "2.95", user="admin")
        assert server["status"] == "SHUTOFF" and server["OS-EXT-SRV-ATTR:host"] != source
    finally:
        api.put(url, headers=mv("2.53"), json={"forced_down": False})
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_96_pinned_availability_zone(api):
    pinned = active(api, boot(api, "2.96", availability_zone="nova"))["id"]
    free = active(api, boot(api, "2.96"))["id"]
    assert show(api, pinned, "2.96")["pinned_availability_zone"] == "nova"
    assert show(api, free, "2.96")["pinned_availability_zone"] is None
    assert "pinned_availability_zone" not in show(api, pinned, "2.95")
    listed = api.get(f"{SERVERS}/detail", user="demo", headers=mv("2.96")).json()["servers"]
    assert {s["id"]: s["pinned_availability_zone"] for s in listed
            if s["id"] in (pinned, free)} == {pinned: "nova", free: None}
    updated = api.put(f"{SERVERS}/{pinned}", user="demo", headers=mv("2.96"),
                      json={"server": {"name": "p"}}).json()["server"]
    assert updated["pinned_availability_zone"] == "nova"
    rebuilt = act(api, pinned, {"rebuild": {"imageRef": CIRROS}}, version="2.96")
    assert rebuilt.json()["server"]["pinned_availability_zone"] == "nova"
    wait_status(api, pinned)
    for s in (pinned, free):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204


def test_2_97_shares(api):
    share = "e8debdc0-447a-4376-a10a-4cd9122d7986"
    sid = active(api, boot(api, "2.97"))["id"]
    url = f"{SERVERS}/{sid}/shares"
    assert api.get(url, user="demo", headers=mv("2.96")).status_code == 404
    assert api.get(url, user="demo", headers=mv("2.97")).json() == {"shares": []}
    assert api.get(f"{url}?x=1", user="demo", headers=mv("2.97")).status_code == 400
    body = {"share": {"share_id": share}}
    active_ = api.post(url, user="demo", headers=mv("2.97"), json=body)
    assert active_.status_code == 409 and "vm_state active" in active_.text
    assert api.post(url, user="demo", headers=mv("2.97"),
                    json={"share": {"share_id": "nope"}}).status_code == 400
    assert act(api, sid, {"os-stop": None}, version="2.97").status_code == 202
    wait_status(api, sid, statuses=("SHUTOFF",))
    r = api.post(url, user="demo", headers=mv("2.97"), json=body)
    assert r.status_code == 409 and "not configured correctly" in r.text
    shown = api.get(f"{url}/{share}", user="demo", headers=mv("2.97"))
    assert shown.status_code == 404 and f"Share {share} could not be found." in shown.text
    assert api.delete(f"{url}/{share}", user="demo", headers=mv("2.97")).status_code == 404
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204
