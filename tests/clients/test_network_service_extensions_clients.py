"""Issue 23's last network extensions through the real clients: router `ha`/`distributed`
(`l3-ha`, `dvr`), `service-type`, `flavors`, `logging` and `local_ip` — openstacksdk on
every backend, the `openstack` CLI on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ l3-ha, dvr
def test_sdk_router_ha_and_distributed(cloud):
    admin = cloud.sdk()
    router = admin.network.create_router(name=_name("hd"), is_ha=True, is_distributed=True)
    assert router.is_ha is True and router.is_distributed is True
    with pytest.raises(exceptions.BadRequestException):  # still up
        admin.network.update_router(router, is_ha=False)
    router = admin.network.update_router(router, is_admin_state_up=False)
    router = admin.network.update_router(router, is_ha=False, is_distributed=False)
    assert router.is_ha is False and router.is_distributed is False
    assert admin.network.get_router(router.id).is_ha is False
    member = cloud.new_project_member()["sdk"]
    own = member.network.create_router(name=_name("own"))
    assert own.is_ha is None and own.is_distributed is None  # not shown to members
    with pytest.raises(exceptions.ForbiddenException):
        member.network.create_router(name=_name("own"), is_ha=True)
    admin.network.delete_router(router)


@sqlite_only
def test_cli_router_ha_and_distributed(cloud):
    name = _name("cli-hd")
    made = cloud.cli("router", "create", "--ha", "--distributed", name, "-f", "json")
    assert made["ha"] is True and made["distributed"] is True
    cloud.cli("router", "set", "--disable", name, parse=False)
    cloud.cli("router", "set", "--no-ha", "--centralized", name, parse=False)
    shown = cloud.cli("router", "show", name, "-f", "json")
    assert shown["ha"] is False and shown["distributed"] is False
    cloud.cli("router", "delete", name, parse=False)
