"""Issue 23 (image and first networking bullets) through the real clients: openstacksdk on
every backend, the openstack CLI on SQLite."""

from __future__ import annotations

import http.server
import threading
import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ image
def test_sdk_image_members_share_and_accept(cloud):
    owner, friend = cloud.new_project_member(), cloud.new_project_member()
    image = owner["sdk"].image.create_image(name=_name("shared"), data=b"shared-data",
                                            disk_format="raw", container_format="bare",
                                            visibility="shared", allow_duplicates=True)
    member = owner["sdk"].image.add_member(image, member_id=friend["project"].id)
    assert member.status == "pending" and member.member_id == friend["project"].id
    with pytest.raises(exceptions.ConflictException):
        owner["sdk"].image.add_member(image, member_id=friend["project"].id)
    visible = lambda **q: [i.id for i in friend["sdk"].image.images(**q)]  # noqa: E731
    assert image.id not in visible()
    assert image.id in visible(visibility="shared", member_status="pending")
    # the owner may not answer for the member; the member accepts
    with pytest.raises(exceptions.ForbiddenException):
        owner["sdk"].image.update_member(friend["project"].id, image, status="accepted")
    accepted = friend["sdk"].image.update_member(friend["project"].id, image, status="accepted")
    assert accepted.status == "accepted"
    assert image.id in visible() and image.id in visible(visibility="shared")
    got = friend["sdk"].image.download_image(image.id)
    assert got.content == b"shared-data"
    assert [m.member_id for m in owner["sdk"].image.members(image)] == [friend["project"].id]
    owner["sdk"].image.remove_member(friend["project"].id, image)
    with pytest.raises(exceptions.NotFoundException):
        friend["sdk"].image.get_image(image.id)
    owner["sdk"].image.delete_image(image)


def test_sdk_deactivate_filters_and_tasks(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    small = conn.image.create_image(name=_name("small"), data=b"x" * 10, disk_format="raw",
                                    container_format="bare", allow_duplicates=True)
    conn.image.deactivate_image(small)
    assert conn.image.get_image(small).status == "deactivated"
    with pytest.raises(exceptions.SDKException):
        conn.image.download_image(small.id)
    assert cloud.sdk().image.download_image(small.id).content == b"x" * 10  # the admin may
    conn.image.reactivate_image(small)
    assert conn.image.get_image(small).status == "active"
    # glance-direct: stage, import; the import leaves a task
    big = conn.image.create_image(name=_name("big"), disk_format="raw", container_format="bare",
                                  allow_duplicates=True)
    conn.image.stage_image(big, data=b"y" * 1000)
    conn.image.import_image(big, method="glance-direct")
    big = conn.image.get_image(big)
    assert big.status == "active" and big.size == 1000
    mine = lambda **q: {i.id for i in conn.image.images(**q)  # noqa: E731
                        if i.id in (small.id, big.id)}
    assert mine(size_min=11) == {big.id} and mine(size_max=999) == {small.id}
    assert mine(created_at=f"gte:{small.created_at}") == {small.id, big.id}
    assert mine(created_at="gt:2999-01-01T00:00:00Z") == set()
    tasks = [t for t in cloud.sdk().image.tasks() if (t.result or {}).get("image_id") == big.id
             or t.input is None]
    shown = [cloud.sdk().image.get_task(t.id) for t in tasks]
    task = next(t for t in shown if t.input["image_id"] == big.id)
    assert task.status == "success" and task.type == "api_image_import"
    with pytest.raises(exceptions.ForbiddenException):
        list(conn.image.tasks())
    for image in (small, big):
        conn.image.delete_image(image)


@sqlite_only
def test_cli_image_deactivate_members(cloud):
    owner, friend = cloud.new_project_member(), cloud.new_project_member()
    env = {"OS_CLOUD": "", "OS_AUTH_URL": f"{cloud.url}/identity", "OS_USER_DOMAIN_ID": "default",
           "OS_PROJECT_DOMAIN_ID": "default", "OS_IDENTITY_API_VERSION": "3",
           "OS_PASSWORD": "pw-secret"}
    as_owner = {**env, "OS_USERNAME": owner["user"].name, "OS_PROJECT_NAME": owner["project"].name}
    as_friend = {**env, "OS_USERNAME": friend["user"].name,
                 "OS_PROJECT_NAME": friend["project"].name}
    image = owner["sdk"].image.create_image(name=_name("cli"), data=b"cli", disk_format="raw",
                                            container_format="bare", visibility="shared",
                                            allow_duplicates=True)
    cloud.cli("image", "set", "--deactivate", image.id, cloud="", env=as_owner, parse=False)
    shown = cloud.cli("image", "show", image.id, "-f", "json", cloud="", env=as_owner)
    assert shown["status"] == "deactivated"
    cloud.cli("image", "set", "--activate", image.id, cloud="", env=as_owner, parse=False)
    assert cloud.cli("image", "show", image.id, "-f", "json", cloud="",
                     env=as_owner)["status"] == "active"
    cloud.cli("image", "add", "project", image.id, friend["project"].id, cloud="", env=as_owner,
              parse=False)
    cloud.cli("image", "set", "--accept", image.id, cloud="", env=as_friend, parse=False)
    members = cloud.cli("image", "member", "list", image.id, "-f", "json", cloud="",
                        env=as_owner)
    assert [(m["Member ID"], m["Status"]) for m in members] == [(friend["project"].id,
                                                                 "accepted")]
    listed = cloud.cli("image", "list", "--shared", "-f", "json", cloud="", env=as_friend)
    assert image.id in [i["ID"] for i in listed]
    cloud.cli("image", "remove", "project", image.id, friend["project"].id, cloud="",
              env=as_owner, parse=False)
    assert cloud.cli("image", "show", image.id, cloud="", env=as_friend,
                     check=False).returncode != 0


# ------------------------------------------------------------------ networking
def _external(admin) -> tuple[object, object]:
    net = admin.network.create_network(name=_name("ext"), is_router_external=True)
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="198.19.7.0/24")
    rbac = next(admin.network.rbac_policies(object_id=net.id, action="access_as_external"))
    return net, rbac


def test_sdk_external_access_in_use_is_kept(cloud):
    # Neutron's rules: a router's gateway of a project losing access keeps the policy; a
    # project with an entry of its own does not lose it; the last entry's removal makes the
    # network internal; the default external network stays shared to everyone
    admin = cloud.sdk()
    user, other = cloud.new_project_member(), cloud.new_project_member()
    net, rbac = _external(admin)
    router = user["sdk"].network.create_router(name=_name("gw"), external_gateway_info={
        "network_id": net.id})
    with pytest.raises(exceptions.ConflictException, match="routers attached to this network"):
        admin.network.delete_rbac_policy(rbac)
    with pytest.raises(exceptions.ConflictException, match="routers attached"):
        admin.network.update_rbac_policy(rbac, target_project_id=other["project"].id)
    assert admin.network.get_network(net.id).is_router_external is True
    own = admin.network.create_rbac_policy(object_type="network", object_id=net.id,
                                           action="access_as_external",
                                           target_project_id=user["project"].id)
    admin.network.delete_rbac_policy(rbac)
    assert admin.network.get_network(net.id).is_router_external is True
    user["sdk"].network.delete_router(router)
    admin.network.delete_rbac_policy(own)
    assert admin.network.get_network(net.id).is_router_external is False
    public = admin.network.find_network("public")
    wildcard = next(p for p in admin.network.rbac_policies(object_id=public.id,
                                                          action="access_as_external")
                    if p.target_project_id == "*")
    for change in (lambda: admin.network.delete_rbac_policy(wildcard),
                   lambda: admin.network.update_rbac_policy(
                       wildcard, target_project_id=other["project"].id)):
        with pytest.raises(exceptions.ConflictException,
                           match="Default external networks must be shared to everyone"):
            change()
    assert admin.network.get_network(public.id).is_router_external is True
    admin.network.delete_network(net)


def test_sdk_floating_ip_details_and_disassociation(cloud):
    user = cloud.new_project_member()
    conn = user["sdk"].network
    public = conn.find_network("public")
    net = conn.create_network(name=_name("fipnet"))
    sub = conn.create_subnet(network_id=net.id, ip_version=4, cidr="10.66.0.0/24")
    router = conn.create_router(name=_name("r"), external_gateway_info={"network_id": public.id})
    conn.add_interface_to_router(router, subnet=sub.id)
    port = conn.create_port(network_id=net.id, name="target")
    fip = conn.create_ip(floating_network_id=public.id, port_id=port.id, description="web")
    assert fip.description == "web" and fip.port_id == port.id
    assert fip.port_details["name"] == "target" and fip.port_details["network_id"] == net.id
    cleared = conn.update_ip(fip, port_id=None)
    assert cleared.port_id is None and cleared.fixed_ip_address is None
    assert conn.get_ip(fip.id).port_details is None
    conn.delete_ip(fip)
    conn.remove_interface_from_router(router, subnet=sub.id)
    conn.delete_router(router)
    conn.delete_port(port)
    conn.delete_network(net)


def test_sdk_subnet_revisions_and_ipv6_mtu(cloud):
    conn = cloud.new_project_member()["sdk"].network
    net = conn.create_network(name=_name("rev"))
    sub = conn.create_subnet(network_id=net.id, ip_version=4, cidr="10.67.0.0/24")
    before = conn.get_network(net.id).revision_number
    conn.update_subnet(sub, name="renamed")
    assert conn.get_network(net.id).revision_number == before + 1
    small = conn.create_network(name=_name("small"), mtu=1200)
    with pytest.raises(exceptions.ConflictException):
        conn.create_subnet(network_id=small.id, ip_version=6, cidr="fd00:67::/64")
    conn.create_subnet(network_id=net.id, ip_version=6, cidr="fd00:68::/64")
    with pytest.raises(exceptions.BadRequestException):
        conn.update_network(net, mtu=1200)
    for n in (net, small):
        conn.delete_network(n)


@pytest.fixture
def web_server():
    """A loopback HTTP server the cloud may fetch image data from."""
    payload = b"fetched by web-download " * 4000

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/disk.img", payload
    server.shutdown()
    server.server_close()


def test_sdk_web_download_and_snapshot_size(cloud, web_server):
    uri, payload = web_server
    member = cloud.new_project_member()
    conn = member["sdk"]
    image = conn.image.create_image(name=_name("web"), disk_format="raw",
                                    container_format="bare", allow_duplicates=True)
    conn.image.import_image(image, method="web-download", uri=uri)
    image = conn.image.wait_for_status(conn.image.get_image(image), status="active", wait=60)
    assert image.size == len(payload)
    assert conn.image.download_image(image.id).content == payload
    refused = conn.image.create_image(name=_name("far"), disk_format="raw",
                                      container_format="bare", allow_duplicates=True)
    try:
        answer = conn.image.import_image(refused, method="web-download", uri="http://192.0.2.1/x")
        status = answer.status_code
    except exceptions.HttpException as exc:
        status = exc.status_code
    assert status == 400  # not loopback: refused by the filter
    assert conn.image.get_image(refused).status == "queued"
    # a server booted from it snapshots to an image of the same size and data
    server = conn.compute.create_server(name=_name("vm"), image_id=image.id, flavor_id="1",
                                        networks="none")
    server = conn.compute.wait_for_server(server, wait=120)
    snap = conn.compute.create_server_image(server, name=_name("snap"), wait=True, timeout=120)
    snap = conn.image.get_image(snap.id)
    assert snap.size == len(payload) and snap.checksum == image.checksum
    assert conn.image.download_image(snap.id).content == payload
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=120)
    for i in (snap, image, refused):
        conn.image.delete_image(i)


def test_sdk_agents_update_and_delete(cloud):
    admin = cloud.sdk()
    agent = next(admin.network.agents())
    updated = admin.network.update_agent(agent, description="rack 9", is_admin_state_up=False)
    assert updated.description == "rack 9" and updated.is_admin_state_up is False
    shown = admin.network.get_agent(agent.id)
    assert shown.description == "rack 9" and shown.is_admin_state_up is False
    admin.network.delete_agent(agent)  # the live agent registers again at once
    back = admin.network.get_agent(agent.id)
    assert back.description is None and back.is_admin_state_up is True and back.is_alive


def test_sdk_security_group_negatives_and_rbac(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    conn, project = member["sdk"].network, member["project"].id
    sg = conn.create_security_group(name=_name("sg"))
    conn.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                    protocol="tcp", port_range_min=22, port_range_max=22)
    with pytest.raises(exceptions.ConflictException):
        conn.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                        protocol="6", port_range_min=22, port_range_max=22)
    with pytest.raises(exceptions.BadRequestException):
        conn.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                        protocol="300")
    net = conn.create_network(name=_name("n"))
    port = conn.create_port(network_id=net.id, security_group_ids=[sg.id, sg.id])
    assert port.security_group_ids == [sg.id]
    used = len(list(conn.security_group_rules(project_id=project)))
    admin.network.update_quota(project, security_group_rules=used + 1)
    with pytest.raises(exceptions.ConflictException, match="[Qq]uota"):
        conn.create_security_group(name=_name("over"))
    # a subnet pool shared with the project through RBAC: used, so kept
    pool = admin.network.create_subnet_pool(name=_name("pool"), prefixes=["10.94.0.0/16"],
                                            default_prefix_length=26)
    grant = admin.network.create_rbac_policy(object_type="subnetpool", object_id=pool.id,
                                             action="access_as_shared",
                                             target_project_id=project)
    sub = conn.create_subnet(network_id=net.id, ip_version=4, subnetpool_id=pool.id)
    assert sub.cidr.startswith("10.94.")
    with pytest.raises(exceptions.ConflictException):
        admin.network.delete_rbac_policy(grant)
    conn.delete_port(port)
    conn.delete_subnet(sub)
    admin.network.delete_rbac_policy(grant)
    admin.network.delete_subnet_pool(pool)
    conn.delete_network(net)


@sqlite_only
def test_cli_subnet_paging_service_types_and_gateways(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    conn = member["sdk"].network
    net = conn.create_network(name=_name("cli"))
    subs = [conn.create_subnet(network_id=net.id, ip_version=4, name=f"cli-{i}",
                               cidr=f"10.95.{i}.0/24") for i in range(3)]
    # openstacksdk pages with limit/marker and follows the links
    paged = [s.name for s in conn.subnets(network_id=net.id, limit=1, sort_key="name",
                                          sort_dir="desc")]
    assert paged == ["cli-2", "cli-1", "cli-0"]
    typed = admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.95.9.0/24",
                                        project_id=member["project"].id,
                                        service_types=["compute:special"])
    port = conn.create_port(network_id=net.id, device_owner="compute:special")
    assert port.fixed_ips[0]["subnet_id"] == typed.id
    conn.delete_port(port)
    router = conn.create_router(name=_name("r"))
    conn.add_interface_to_router(router, subnet=subs[0].id)
    proc = cloud.cli("subnet", "set", "--gateway", "10.95.0.9", subs[0].id, check=False)
    assert proc.returncode != 0 and "in use" in (proc.stderr + proc.stdout)
    conn.remove_interface_from_router(router, subnet=subs[0].id)
    cloud.cli("subnet", "set", "--gateway", "10.95.0.9", subs[0].id, parse=False)
    assert conn.get_subnet(subs[0].id).gateway_ip == "10.95.0.9"
    # enable_snat on an external gateway (an admin's)
    public = conn.find_network("public")
    cloud.cli("router", "set", "--external-gateway", public.id, "--disable-snat", router.id,
              parse=False)
    assert admin.network.get_router(router.id).external_gateway_info["enable_snat"] is False
    conn.delete_router(router)
    conn.delete_network(net)
