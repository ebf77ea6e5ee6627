"""Server create `networks` per microversion (Get Me a Network, issue 6): every 400 of the
spec's Error Conditions and Negative tests at 2.37+ and at 2.36, and the network-backed
cases (auto/none/explicit networks, ports, fixed IPs, 409s)."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_compute import CIRROS, boot, mv  # noqa: F401

NET = str(uuid.uuid4())
PORT = str(uuid.uuid4())


def bad(r, text: str) -> None:
    assert r.status_code == 400, r.text
    assert text in r.json()["badRequest"]["message"], r.json()


# ------------------------------------------------------------------ schema (no network calls)
@pytest.mark.parametrize("version", ["2.37", "2.41", "2.42"])
def test_networks_required_from_2_37(api, version):
    bad(boot(api, version=version), "'networks' is a required property")


@pytest.mark.parametrize("networks", [
    [{"uuid": "auto"}],                      # auto is only the whole value
    [{"uuid": "none"}],
    [{"uuid": "auto"}, {"uuid": NET}],       # auto with a network
    ["auto", {"uuid": NET}],
    ["none", {"port": PORT}],                # none with a port
    ["auto", "none"],
    "bogus",
    {"uuid": NET},
    [{"uuid": "br-" + NET}],                 # uuids are strict from 2.37
    [{"uuid": NET, "bogus": 1}],
])
def test_auto_none_mixed_or_malformed_is_400_at_2_37(api, networks):
    r = boot(api, version="2.37", networks=networks)
    bad(r, "Invalid input for field/attribute networks.")
    assert "is not valid under any of the given schemas" in r.text


def test_tag_rejected_2_37_to_2_41_allowed_2_42(api):
    networks = [{"uuid": NET, "tag": "nic1"}]
    bad(boot(api, version="2.37", networks=networks), "is not valid under any")
    bad(boot(api, version="2.41", networks=networks), "is not valid under any")


@pytest.mark.parametrize("value", ["auto", "none"])
def test_auto_none_before_2_37_is_400(api, value):
    r = boot(api, version="2.36", networks=value)
    bad(r, f"Invalid input for field/attribute networks. Value: {value}. "
           f"'{value}' is not of type 'array'")
    r = boot(api, version="2.1", networks=value)
    assert r.status_code == 400


def test_pre_2_37_rules(api):
    bad(boot(api, version="2.36", networks=[{"uuid": "auto"}]),
        "Bad networks format: network uuid is not in proper format (auto)")
    bad(boot(api, version="2.36", networks=[{"fixed_ip": "10.0.0.4"}]),
        "Bad network format: missing 'uuid'")
    bad(boot(api, version="2.31", networks=[{"uuid": NET, "tag": "x"}]),
        "Additional properties are not allowed ('tag' was unexpected)")


@pytest.mark.parametrize("version", ["2.36", "2.42"])
def test_item_rules(api, version):
    bad(boot(api, version=version, networks=[{"port": PORT, "fixed_ip": "10.0.0.4"}]),
        f"Specified Fixed IP '10.0.0.4' cannot be used with port '{PORT}'")
    bad(boot(api, version=version, networks=[{"port": PORT}, {"port": PORT}]),
        f"Port ID '{PORT}' was specified twice")
    bad(boot(api, version=version, networks=[{"uuid": NET, "fixed_ip": "10.0.0.4"}],
             max_count=2), "max_count cannot be greater than 1 if an fixed_ip is specified.")
    bad(boot(api, version=version, networks=[{"port": PORT}], max_count=2),
        "Unable to launch multiple instances with a single configured port ID.")
    bad(boot(api, version=version, networks=[{"uuid": NET, "fixed_ip": "not-an-ip"}]),
        "Invalid input for field/attribute")


def test_none_makes_no_network_calls(api, monkeypatch):
    import stackling.compute.network_api as network_api

    def refuse(*_a, **_k):
        raise AssertionError("no network call for networks=none")

    monkeypatch.setattr(network_api, "_net", refuse)
    r = boot(api, version="2.37", networks="none")
    assert r.status_code == 202, r.text
    from tests.api.test_compute import wait_status

    server = wait_status(api, r.json()["server"]["id"])
    assert server["status"] == "ACTIVE" and server["addresses"] == {}
    assert "security_groups" not in server
    assert api.delete(f"/compute/v2.1/servers/{server['id']}", user="demo").status_code == 204
