"""Issue 11 items 3, 4, 6, 7, 14, 15 through the clients that exposed them: openstacksdk's
cloud layer as Ansible's openstack.cloud drives it (auto_ip, re-runs, delete_ips), the
`openstack` CLI, and a clouds.yaml with `auth_type: v3applicationcredential`."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import yaml

from tests.conftest import sdk_connection, sqlite_only


def _boot(conn, name: str, **kw):
    """The cloud layer's create_server, as Ansible's `server` module calls it (the
    project's network is auto-allocated: `networks: auto` from 2.37)."""
    return conn.create_server(name, image="cirros", flavor="m1.tiny", wait=True, timeout=60,
                              **kw)


def _fips(conn) -> list:
    return list(conn.network.ips(project_id=conn.current_project_id))


# ------------------------------------------------------------------ item 3
def test_auto_ip_rerun_and_delete_ips(cloud):
    """Ansible `server` with auto_ip twice (the second changes nothing), then state=absent
    with delete_fip: the floating IP is in `addresses`, and it is released."""
    member = cloud.new_project_member()
    conn = member["sdk"]
    _boot(conn, "fid-auto", auto_ip=True)
    server = conn.get_server("fid-auto")
    floating = [a for ips in server.addresses.values() for a in ips
                if a["OS-EXT-IPS:type"] == "floating"]
    assert len(floating) == 1, server.addresses
    assert server.public_v4 == floating[0]["addr"]
    # the re-run: find the server, ensure its IPs; nothing new is allocated
    again = conn.get_server("fid-auto")
    again = conn.add_ips_to_server(again, auto_ip=True, wait=True, timeout=60)
    assert len(_fips(conn)) == 1 and again.public_v4 == floating[0]["addr"]
    # /ips shows it too (`openstack server ssh` reads the addresses)
    (label, ips), = conn.compute.get(f"/servers/{server.id}/ips").json()["addresses"].items()
    assert {"version": 4, "addr": floating[0]["addr"]} in ips
    assert conn.delete_server("fid-auto", wait=True, timeout=60, delete_ips=True)
    assert _fips(conn) == []


# ------------------------------------------------------------------ items 4 and 6
def _ensure_groups(conn, server, wanted: set[str]) -> bool:
    """Ansible `server`'s security group sync: fetch, then add what is missing and
    remove what is extra; True when something changed."""
    current = {sg["name"] for sg in conn.compute.fetch_server_security_groups(server)
               .security_groups}
    for name in wanted - current:
        conn.compute.add_security_group_to_server(server, conn.network.find_security_group(
            name, ignore_missing=False))
    for name in current - wanted:
        conn.compute.remove_security_group_from_server(
            server, conn.network.find_security_group(name, ignore_missing=False))
    return current != wanted


def test_server_security_groups_rerun_and_access_ips(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    server = _boot(conn, "fid-sg")
    web = conn.network.create_security_group(name="web")
    conn.network.create_security_group_rule(
        security_group_id=web.id, direction="ingress", protocol="tcp", port_range_min=22,
        port_range_max=22, remote_ip_prefix="0.0.0.0/0")
    assert _ensure_groups(conn, server, {"default", "web"}) is True
    assert _ensure_groups(conn, server, {"default", "web"}) is False  # the re-run
    groups = conn.compute.fetch_server_security_groups(server).security_groups
    rule = next(sg for sg in groups if sg["name"] == "web")["rules"][0]
    assert (rule["ip_protocol"], rule["from_port"], rule["to_port"]) == ("tcp", 22, 22)
    port = next(conn.network.ports(device_id=server.id))
    assert web.id in port.security_group_ids
    assert _ensure_groups(conn, server, {"default"}) is True
    assert web.id not in conn.network.get_port(port.id).security_group_ids
    # access IPs as Nova stores them
    conn.compute.update_server(server.id, access_ipv4="192.0.2.7",
                               access_ipv6="2001:0DB8:0000:0000:0000:0000:0000:0007")
    shown = conn.compute.get_server(server.id)
    assert (shown.access_ipv4, shown.access_ipv6) == ("192.0.2.7", "2001:db8::7")
    conn.delete_server("fid-sg", wait=True, timeout=60)


# ------------------------------------------------------------------ item 7
def test_network_proxies_through_the_sdk(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    _boot(conn, "fid-proxy")
    nets = conn.compute.get("/os-tenant-networks", microversion="2.35").json()["networks"]
    assert [n["label"] for n in nets if n["label"] == "auto_allocated_network"]
    assert conn.compute.get("/os-tenant-networks", microversion="2.36").status_code == 404
    pools = conn.compute.get("/os-floating-ip-pools", microversion="2.35").json()
    assert {"name": "public"} in pools["floating_ip_pools"]
    conn.delete_server("fid-proxy", wait=True, timeout=60)


def _count(servers) -> int:
    """The CLI's Servers column: a count in tables, the server usages in JSON."""
    return len(servers) if isinstance(servers, list) else int(servers)


@sqlite_only
def test_cli_usage_hosts_and_deleted(cloud):
    member = cloud.new_project_member()
    _boot(member["sdk"], "fid-usage")
    project = member["project"]
    usage = cloud.cli("usage", "list", "--start", "2020-01-01", "--end", "2100-01-01",
                      "-f", "json")
    mine = next(u for u in usage if project.id in (u["Project"], project.name))
    assert _count(mine["Servers"]) == 1 and float(mine["CPU Hours"]) > 0
    one = cloud.cli("usage", "show", "--project", project.id, "--start", "2020-01-01",
                    "--end", "2100-01-01", "-f", "json")
    assert _count(one["Servers"]) == 1
    hosts = cloud.cli("host", "list", "-f", "json")
    assert any(h["Service"] == "compute" for h in hosts)
    assert cloud.cli("server", "list", "--all-projects", "--deleted", "-f", "json") == []


# ------------------------------------------------------------------ item 14
def test_groups_through_the_sdk(cloud):
    admin = cloud.sdk()
    suffix = uuid.uuid4().hex[:6]
    project = admin.identity.create_project(name=f"gp-{suffix}", domain_id="default")
    user = admin.identity.create_user(name=f"gu-{suffix}", password="pw-secret",
                                      domain_id="default")
    group = admin.identity.create_group(name=f"gg-{suffix}", domain_id="default")
    member = admin.identity.find_role("member")
    admin.identity.assign_project_role_to_group(project, group, member)
    assert admin.identity.validate_group_has_project_role(project, group, member)
    admin.identity.add_user_to_group(user, group)
    assert admin.identity.check_user_in_group(user, group)
    assert [g.id for g in admin.identity.user_groups(user)] == [group.id]
    conn = sdk_connection(None, None, auth={
        "auth_url": f"{cloud.url}/identity", "username": user.name, "password": "pw-secret",
        "project_name": project.name, "user_domain_id": "default",
        "project_domain_id": "default"})
    token = conn.session.auth.get_access(conn.session)
    assert set(token.role_names) == {"member", "reader"}
    assert conn.network.create_network(name="via-group").project_id == project.id
    effective = list(admin.identity.role_assignments(
        **{"user.id": user.id, "effective": True}))
    assert {a.role["id"] for a in effective} >= {member.id}
    admin.identity.remove_user_from_group(user, group)
    assert not admin.identity.check_user_in_group(user, group)
    admin.identity.delete_group(group)


def _appcred_cloud(cloud, tmp: Path, cred) -> tuple[Path, str]:
    path = tmp / "appcred-clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {"appcred": {
        "auth_type": "v3applicationcredential", "region_name": "RegionOne",
        "identity_api_version": 3, "interface": "public",
        "auth": {"auth_url": f"{cloud.url}/identity",
                 "application_credential_id": cred.id,
                 "application_credential_secret": cred.secret}}}}))
    return path, "appcred"


def test_application_credential_login(cloud, tmp_path):
    member = cloud.new_project_member()
    conn = member["sdk"]
    cred = conn.identity.create_application_credential(
        user=conn.current_user_id, name="ci", roles=[{"name": "member"}])
    assert cred.secret
    listed = list(conn.identity.application_credentials(user=conn.current_user_id))
    assert [c.name for c in listed] == ["ci"] and listed[0].secret is None
    path, name = _appcred_cloud(cloud, tmp_path, cred)
    ci = sdk_connection(path, name)
    assert ci.current_project_id == member["project"].id
    net = ci.network.create_network(name="from-ci")
    assert net.project_id == member["project"].id
    # a restricted credential may not mint another
    denied = ci.identity.post(f"/users/{conn.current_user_id}/application_credentials",
                              json={"application_credential": {"name": "nested"}})
    assert denied.status_code == 403
    conn.identity.delete_application_credential(conn.current_user_id, cred.id)
    fresh = sdk_connection(path, name)
    try:
        fresh.network.networks()
        list(fresh.network.networks())
        raise AssertionError("a deleted application credential still logs in")
    except Exception as err:  # keystoneauth's Unauthorized
        assert "401" in str(err) or "Unauthorized" in type(err).__name__


@sqlite_only
def test_cli_application_credential(cloud, tmp_path):
    member = cloud.new_project_member()
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}
    made = cloud.cli("application", "credential", "create", "terraform", "--role", "reader",
                     "-f", "json", cloud="", env=env)
    made = {k.lower(): v for k, v in made.items()}
    assert made["secret"] and made["name"] == "terraform"
    assert "reader" in str(made["roles"])

    class Cred:
        id, secret = made["id"], made["secret"]

    path, name = _appcred_cloud(cloud, tmp_path, Cred)
    token = cloud.cli("token", "issue", "-f", "json", cloud=name,
                      env={"OS_CLIENT_CONFIG_FILE": str(path)})
    assert token["project_id"] == member["project"].id
    listed = cloud.cli("application", "credential", "list", "-f", "json", cloud="", env=env)
    assert [c["Name"] for c in listed] == ["terraform"]


# ------------------------------------------------------------------ item 15
@sqlite_only
def test_cli_image_create_import(cloud, tmp_path):
    data = tmp_path / "disk.img"
    data.write_bytes(b"\x00" * 1024 + b"stackling" * 1000)
    made = cloud.cli("image", "create", "--import", "--disk-format", "raw",
                     "--container-format", "bare", "--file", str(data), "imported", "-f",
                     "json")
    shown = cloud.cli("image", "show", made["id"], "-f", "json")
    assert shown["status"] == "active" and shown["size"] == data.stat().st_size
    info = json.loads(json.dumps(cloud.sdk().image.get_import_info().import_methods))
    assert info["value"] == ["glance-direct", "web-download"]


@sqlite_only
def test_cli_server_ssh_finds_the_floating_ip(cloud, tmp_path):
    """`openstack server ssh --public` picks the floating IP (a stand-in `ssh` records
    the command line instead of connecting)."""
    member = cloud.new_project_member()
    _boot(member["sdk"], "fid-ssh", auto_ip=True)
    floating = member["sdk"].get_server("fid-ssh").public_v4
    assert floating
    record = tmp_path / "ssh-args"
    fake = tmp_path / "bin" / "ssh"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {record}\n")
    fake.chmod(0o755)
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null",
           "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    cloud.cli("server", "ssh", "--public", "--login", "cirros", "fid-ssh", cloud="", env=env,
              parse=False)
    assert floating in record.read_text().split()


def test_concurrent_stage_and_import_one_wins(cloud):
    """Racing stagers and importers of one image: exactly one of each succeeds (a
    compare-and-set on the status), the others are 409s, never 500s."""
    from concurrent.futures import ThreadPoolExecutor

    token = cloud.token("demo")
    with cloud.http(token) as http:
        image = http.post("/image/v2/images", json={
            "name": "race", "disk_format": "raw", "container_format": "bare"}).json()
    url = f"/image/v2/images/{image['id']}"

    def stage(i: int) -> int:
        with cloud.http(token) as http:
            return http.put(f"{url}/stage", content=bytes([i]) * 200_000, headers={
                "content-type": "application/octet-stream"}).status_code

    def start(_: int) -> int:
        with cloud.http(token) as http:
            return http.post(f"{url}/import", json={
                "method": {"name": "glance-direct"}}).status_code

    with ThreadPoolExecutor(4) as pool:
        staged = sorted(pool.map(stage, range(4)))
        imported = sorted(pool.map(start, range(4)))
    assert staged == [204, 409, 409, 409], staged
    assert imported == [202, 409, 409, 409], imported
    with cloud.http(token) as http:
        done = http.get(url).json()
        assert done["status"] == "active" and done["size"] == 200_000
