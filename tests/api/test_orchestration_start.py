"""A stack created while the cloud is still starting (compute registering its hosts in its
start hook, in the background) is built once the services it calls have started: its
first step does not run in the request then, and the workers wait for the services. Two
CI runs of the whole suite saw a worker's first in-process cloud fail its first Heat
server with "No valid host was found." this way."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_orchestration import Heat, unique
from tests.conftest import make_api

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.33.0.0/24"}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny",
            "networks": [{"subnet": {"get_resource": "subnet"}}]}},
    },
}


def test_a_stack_made_while_compute_starts_is_built_on_its_hosts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackling.compute import hosts

    release, real = threading.Event(), hosts.start_hosts

    def slow_start(runtime: Any) -> None:  # compute's start hook, held until released
        assert release.wait(60)
        real(runtime)

    monkeypatch.setattr(hosts, "start_hosts", slow_start)
    cloud = make_api(tmp_path / "cloud")
    api = next(cloud)
    try:
        assert not api.runtime.ready["compute"].is_set()
        heat = Heat(api)
        name = unique()
        r = heat.create(name, TEMPLATE)
        assert r.status_code == 201, r.text
        release.set()
        stack = heat.wait(name)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    finally:
        release.set()
        cloud.close()
