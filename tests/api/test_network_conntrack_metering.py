"""Router conntrack helpers (`l3-conntrack-helper`) and metering labels and rules
(`metering`) over the in-process app: CRUD, Neutron's checks and errors, admin-only
metering."""

from __future__ import annotations

import uuid

from tests.api.test_network import N, create, neutron_error

M = f"{N}/metering"


def test_conntrack_helpers(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"l3-conntrack-helper", "metering",
            "metering_source_and_destination_fields"} <= aliases
    router = create(api, "routers", "router", {"name": "ct"}, user="demo")
    url = f"{N}/routers/{router['id']}/conntrack_helpers"
    r = api.post(url, user="demo", json={"conntrack_helper": {
        "protocol": "tcp", "port": 21, "helper": "ftp"}})
    assert r.status_code == 201, r.text
    helper = r.json()["conntrack_helper"]
    assert helper == {"id": helper["id"], "protocol": "tcp", "port": 21, "helper": "ftp"}
    neutron_error(api.post(url, user="demo", json={"conntrack_helper": {
        "protocol": "tcp", "port": 21, "helper": "ftp"}}), 400, "BadRequest")  # duplicate
    neutron_error(api.post(url, user="demo", json={"conntrack_helper": {
        "protocol": "udp", "port": 21, "helper": "ftp"}}), 400)  # ftp is tcp only
    for bad in ({"protocol": "tcp", "port": 0, "helper": "ftp"},
                {"protocol": "icmp", "port": 1, "helper": "ftp"}, {"port": 21, "helper": "ftp"}):
        neutron_error(api.post(url, user="demo", json={"conntrack_helper": bad}), 400)
    assert [h["id"] for h in api.get(f"{url}?helper=ftp", user="demo").json()[
        "conntrack_helpers"]] == [helper["id"]]
    r = api.put(f"{url}/{helper['id']}", user="demo", json={"conntrack_helper": {"port": 2121}})
    assert r.status_code == 200 and r.json()["conntrack_helper"]["port"] == 2121
    neutron_error(api.get(f"{url}/{uuid.uuid4()}", user="demo"), 404,
                  "ConntrackHelperNotFound")
    neutron_error(api.get(f"{N}/routers/{uuid.uuid4()}/conntrack_helpers", user="demo"), 404,
                  "RouterNotFound")
    assert api.delete(f"{url}/{helper['id']}", user="demo").status_code == 204
    assert api.get(url, user="demo").json()["conntrack_helpers"] == []


def test_metering_labels_and_rules(api):
    label = create(api, "metering/metering-labels", "metering_label",
                   {"name": "traffic", "description": "d"})
    assert label["shared"] is False and label["name"] == "traffic"
    rules = f"{M}/metering-label-rules"
    r = api.post(rules, json={"metering_label_rule": {
        "metering_label_id": label["id"], "remote_ip_prefix": "10.0.0.0/24",
        "direction": "egress"}})
    assert r.status_code == 201, r.text
    rule = r.json()["metering_label_rule"]
    assert rule["excluded"] is False and rule["direction"] == "egress"
    neutron_error(api.post(rules, json={"metering_label_rule": {
        "metering_label_id": label["id"], "remote_ip_prefix": "10.0.0.128/25",
        "direction": "egress"}}), 409, "MeteringLabelRuleOverlaps")
    neutron_error(api.post(rules, json={"metering_label_rule": {
        "metering_label_id": label["id"], "remote_ip_prefix": "10.1.0.0/24",
        "source_ip_prefix": "10.2.0.0/24"}}), 400)
    neutron_error(api.post(rules, json={"metering_label_rule": {
        "metering_label_id": label["id"]}}), 400)
    r = api.post(rules, json={"metering_label_rule": {
        "metering_label_id": label["id"], "source_ip_prefix": "10.3.0.0/24",
        "destination_ip_prefix": "0.0.0.0/0"}})
    assert r.status_code == 201, r.text
    assert r.json()["metering_label_rule"]["direction"] == "ingress"
    neutron_error(api.post(rules, json={"metering_label_rule": {
        "metering_label_id": str(uuid.uuid4()), "remote_ip_prefix": "10.9.0.0/24"}}), 404,
        "MeteringLabelNotFound")
    # admin-only: a project sees nothing and may make nothing
    assert api.get(f"{M}/metering-labels", user="demo").json()["metering_labels"] == []
    neutron_error(api.get(f"{M}/metering-labels/{label['id']}", user="demo"), 404)
    neutron_error(api.post(f"{M}/metering-labels", user="demo",
                           json={"metering_label": {"name": "x"}}), 403)
    shown = api.get(f"{rules}/{rule['id']}").json()["metering_label_rule"]
    assert shown["remote_ip_prefix"] == "10.0.0.0/24"
    assert api.delete(f"{M}/metering-labels/{label['id']}").status_code == 204
    neutron_error(api.get(f"{rules}/{rule['id']}"), 404, "MeteringLabelRuleNotFound")
