"""Keystone's wider API through the real clients (openstacksdk, python-keystoneclient and
the openstack CLI), on every backend: catalog management, domains and domain roles,
credentials and EC2 logins, trusts and trust-scoped tokens, policies, access rules, list
filters and project tags (issue 23, Identity)."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import httpx
import pytest
from openstack import exceptions

from tests.conftest import sdk_connection, sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _keystone(conn: Any) -> Any:
    from keystoneclient.v3 import client

    return client.Client(session=conn.session, interface="public", region_name="RegionOne")


def _login(cloud: Any, **auth: Any) -> Any:
    return sdk_connection(None, None, auth={"auth_url": f"{cloud.url}/identity", **auth})


def test_sdk_catalog_management(cloud):
    admin = cloud.sdk()
    parent = admin.identity.create_region(id=_name("north"), description="parent")
    # extra attributes are kept and shown (Gophercloud's acceptance test sends one)
    extra = admin.identity.post("/regions", json={"region": {
        "id": _name("east"), "email": "east@example.com"}}).json()["region"]
    assert admin.identity.get(f"/regions/{extra['id']}").json()["region"]["email"] == (
        "east@example.com")
    admin.identity.delete_region(extra["id"])
    child = admin.identity.create_region(id=_name("north-a"), parent_region_id=parent.id)
    assert admin.identity.get_region(child.id).parent_region_id == parent.id
    admin.identity.update_region(child, description="first zone")
    assert admin.identity.get_region(child.id).description == "first zone"
    assert {child.id} == {r.id for r in admin.identity.regions(parent_region_id=parent.id)}
    with pytest.raises(exceptions.BadRequestException):  # a region may not be its own ancestor
        admin.identity.update_region(parent, parent_region_id=child.id)

    service = admin.identity.create_service(type="x-widget", name="widgets",
                                            description="made by the test")
    assert admin.identity.get_service(service.id).description == "made by the test"
    admin.identity.update_service(service, name="gadgets")
    assert admin.identity.get_service(service.id).name == "gadgets"
    endpoint = admin.identity.create_endpoint(service_id=service.id, interface="public",
                                              url="http://127.0.0.1:9/widgets",
                                              region_id=child.id)
    admin.identity.update_endpoint(endpoint, url="http://127.0.0.1:9/widgets/v2")
    assert admin.identity.get_endpoint(endpoint.id).url == "http://127.0.0.1:9/widgets/v2"
    # a name and a description are kept as the endpoint's extras (Gophercloud sends them)
    r = admin.identity.patch(f"/endpoints/{endpoint.id}", json={"endpoint": {
        "name": "widgets-public", "description": "Updated Endpoint"}})
    assert r.json()["endpoint"]["description"] == "Updated Endpoint"
    assert admin.identity.get(f"/endpoints/{endpoint.id}").json()["endpoint"]["name"] == (
        "widgets-public")
    # a new token's catalog carries the new service, so clients find it
    catalog = admin.identity.get("/auth/catalog").json()["catalog"]
    entry = next(e for e in catalog if e["type"] == "x-widget")
    assert entry["endpoints"][0]["region_id"] == child.id
    with pytest.raises(exceptions.HttpException) as denied:  # its child holds an endpoint
        admin.identity.delete_region(parent)
    assert denied.value.status_code == 403

    admin.identity.delete_endpoint(endpoint)
    admin.identity.delete_service(service)
    admin.identity.delete_region(parent)  # with its child, as Keystone
    assert admin.identity.find_region(child.id) is None
    assert admin.identity.find_service(service.id) is None


def test_sdk_domains_domain_roles_and_implied_roles(cloud):
    admin = cloud.sdk()
    keystone = _keystone(admin)
    domain = admin.identity.create_domain(name=_name("dom"), description="d")
    user = admin.identity.create_user(name="dom-user", password="pw-secret",
                                      domain_id=domain.id)
    group = admin.identity.create_group(name="dom-group", domain_id=domain.id)
    admin.identity.add_user_to_group(user, group)
    reader = admin.identity.find_role("reader")
    member = admin.identity.find_role("member")
    admin.identity.assign_domain_role_to_user(domain, user, reader)
    admin.identity.assign_domain_role_to_group(domain, group, member)
    assert admin.identity.validate_user_has_domain_role(domain, user, reader)
    assert admin.identity.validate_group_has_domain_role(domain, group, member)
    rows = list(admin.identity.role_assignments(scope_domain_id=domain.id))
    assert {(a.role["id"], "user" if a.user else "group") for a in rows} == {
        (reader.id, "user"), (member.id, "group")}
    # the user logs in scoped to its domain and holds both roles (its own and its group's)
    conn = _login(cloud, username=user.name, password="pw-secret", user_domain_id=domain.id,
                  domain_id=domain.id)
    token = conn.identity.get("/auth/tokens", headers={
        "X-Subject-Token": conn.session.get_token()}).json()["token"]
    assert token["domain"]["id"] == domain.id
    assert {r["name"] for r in token["roles"]} == {"reader", "member"}

    # a domain-specific role, named like a global one, that implies a global role
    dsr = admin.identity.create_role(name="member", domain_id=domain.id)
    assert dsr.domain_id == domain.id and dsr.id != member.id
    assert [r.id for r in admin.identity.roles(domain_id=domain.id)] == [dsr.id]
    keystone.inference_rules.create(dsr.id, reader.id)
    assert keystone.inference_rules.get(dsr.id, reader.id).implies["id"] == reader.id
    inferences = keystone.inference_rules.list_inference_roles()
    assert any(i.prior_role["id"] == dsr.id for i in inferences)
    project = admin.identity.create_project(name=_name("dom-proj"), domain_id=domain.id)
    admin.identity.assign_project_role_to_user(project, user, dsr)
    conn = _login(cloud, username=user.name, password="pw-secret", user_domain_id=domain.id,
                  project_id=project.id)
    token = conn.identity.get("/auth/tokens", headers={
        "X-Subject-Token": conn.session.get_token()}).json()["token"]
    # the domain-specific role gives what it implies; it is not itself in the token
    assert [r["id"] for r in token["roles"]] == [reader.id]
    keystone.inference_rules.delete(dsr.id, reader.id)

    admin.identity.unassign_domain_role_from_user(domain, user, reader)
    assert not admin.identity.validate_user_has_domain_role(domain, user, reader)
    with pytest.raises(exceptions.HttpException) as denied:
        admin.identity.delete_domain(domain)
    assert denied.value.status_code == 403  # an enabled domain stays
    admin.identity.update_domain(domain, enabled=False)
    admin.identity.delete_domain(domain)
    assert admin.identity.find_domain(domain.id) is None
    assert admin.identity.find_user(user.id) is None  # its users went with it


def _signed(access: str, secret: str, host: str) -> dict[str, Any]:
    """An EC2 API request signed as an EC2 client signs it (signature version 4)."""
    import datetime as dt

    from keystoneclient.contrib.ec2.utils import Ec2Signer

    now = dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    creds = {"access": access, "host": host, "verb": "GET", "path": "/",
             "params": {"Action": "DescribeInstances"},
             "body_hash": hashlib.sha256(b"").hexdigest(),
             "headers": {"Host": host, "X-Amz-Date": stamp, "Authorization": (
                 f"AWS4-HMAC-SHA256 Credential={access}/{stamp[:8]}/RegionOne/ec2/aws4_request,"
                 " SignedHeaders=host;x-amz-date, Signature=x")}}
    creds["signature"] = Ec2Signer(secret).generate(creds)
    return creds


def test_sdk_credentials_and_ec2_logins(cloud):
    admin = cloud.sdk()
    user_id = admin.current_user_id
    project_id = admin.current_project_id
    blob = json.dumps({"access": uuid.uuid4().hex, "secret": uuid.uuid4().hex})
    cred = admin.identity.create_credential(type="ec2", blob=blob, user_id=user_id,
                                            project_id=project_id)
    assert cred.id == hashlib.sha256(json.loads(blob)["access"].encode()).hexdigest()
    other = admin.identity.create_credential(type="totp", blob="GEZDGNBVGY3TQOJQ",
                                             user_id=user_id)
    assert {cred.id, other.id} <= {c.id for c in admin.identity.credentials(user_id=user_id)}
    admin.identity.update_credential(other, blob="MFRGGZDFMZTWQ2LK")
    assert admin.identity.get_credential(other.id).blob == "MFRGGZDFMZTWQ2LK"
    admin.identity.delete_credential(other)
    assert admin.identity.find_credential(other.id) is None

    # python-keystoneclient's OS-EC2 calls, then a request signed with the secret logs in
    keystone = _keystone(admin)
    ec2 = keystone.ec2.create(user_id, project_id)
    assert ec2.access in {c.access for c in keystone.ec2.list(user_id)}
    assert keystone.ec2.get(user_id, ec2.access).secret == ec2.secret
    creds = _signed(ec2.access, ec2.secret, "127.0.0.1:8773")
    r = httpx.post(f"{cloud.url}/identity/v3/ec2tokens", json={"credentials": creds}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["token"]["project"]["id"] == project_id
    assert r.json()["token"]["user"]["id"] == user_id
    nets = httpx.get(f"{cloud.url}/networking/v2.0/networks", timeout=30,
                     headers={"X-Auth-Token": r.headers["X-Subject-Token"]})
    assert nets.status_code == 200
    forged = _signed(ec2.access, "not-the-secret", "127.0.0.1:8773")
    r = httpx.post(f"{cloud.url}/identity/v3/ec2tokens", json={"credentials": forged}, timeout=30)
    assert r.status_code == 401
    keystone.ec2.delete(user_id, ec2.access)
    r = httpx.post(f"{cloud.url}/identity/v3/ec2tokens", json={"credentials": creds}, timeout=30)
    assert r.status_code == 404  # as Keystone: "EC2 access key not found."
    admin.identity.delete_credential(cred)


def test_sdk_trusts_and_trust_scoped_tokens(cloud):
    admin = cloud.sdk()
    trustee = cloud.new_project_member()
    project_id = admin.current_project_id
    member = admin.identity.find_role("member")
    trust = admin.identity.create_trust(
        trustor_user_id=admin.current_user_id, trustee_user_id=trustee["user"].id,
        project_id=project_id, impersonation=True, roles=[{"name": "member"}])
    assert [r["id"] for r in trust.roles] == [member.id]
    assert trust.id in {t.id for t in admin.identity.trusts(trustor_user_id=admin.current_user_id)}
    assert trust.id in {t.id for t in trustee["sdk"].identity.trusts(
        trustee_user_id=trustee["user"].id)}
    assert trustee["sdk"].identity.get_trust(trust.id).project_id == project_id
    roles = trustee["sdk"].identity.get(f"/OS-TRUST/trusts/{trust.id}/roles").json()["roles"]
    assert [r["name"] for r in roles] == ["member"]

    # the trustee logs in through the trust (as Heat's deferred auth does): it acts as
    # the trustor, in the trustor's project, with the delegated roles only
    conn = _login(cloud, username=trustee["user"].name, password=trustee["password"],
                  user_domain_id="default", trust_id=trust.id)
    token = conn.identity.get("/auth/tokens", headers={
        "X-Subject-Token": conn.session.get_token()}).json()["token"]
    assert token["OS-TRUST:trust"]["id"] == trust.id
    assert token["user"]["id"] == admin.current_user_id
    assert token["project"]["id"] == project_id
    assert {r["name"] for r in token["roles"]} == {"member", "reader"}
    assert list(conn.network.networks())  # the token works on other services

    # only the trustor may delete it; then its tokens stop working
    with pytest.raises(exceptions.ForbiddenException):
        trustee["sdk"].identity.delete_trust(trust)
    admin.identity.delete_trust(trust)
    r = httpx.get(f"{cloud.url}/networking/v2.0/networks", timeout=30,
                  headers={"X-Auth-Token": conn.session.get_token()})
    assert r.status_code == 401
    from keystoneauth1.exceptions.http import Unauthorized

    with pytest.raises(Unauthorized):  # no new trust-scoped token either
        _login(cloud, username=trustee["user"].name, password=trustee["password"],
               user_domain_id="default", trust_id=trust.id).session.get_token()


def test_sdk_policies_and_access_rules(cloud):
    admin = cloud.sdk()
    policy = admin.identity.create_policy(blob='{"default": ""}', type="application/json")
    admin.identity.update_policy(policy, blob='{"default": "role:admin"}')
    assert admin.identity.get_policy(policy.id).blob == '{"default": "role:admin"}'
    assert policy.id in {p.id for p in admin.identity.policies()}
    admin.identity.delete_policy(policy)
    assert admin.identity.find_policy(policy.id) is None

    user = cloud.new_project_member()
    conn, user_id = user["sdk"], user["user"].id
    cred = conn.identity.create_application_credential(
        user_id, name="rules", access_rules=[{"service": "network", "method": "GET",
                                               "path": "/v2.0/networks"}])
    rules = list(conn.identity.access_rules(user_id))
    assert [(r.service, r.method, r.path) for r in rules] == [("network", "GET", "/v2.0/networks")]
    assert conn.identity.get_access_rule(user_id, rules[0].id).path == "/v2.0/networks"
    with pytest.raises(exceptions.ForbiddenException):  # still used by the credential
        conn.identity.delete_access_rule(user_id, rules[0].id)
    # a second credential naming the same rule shares it
    again = conn.identity.create_application_credential(
        user_id, name="again", access_rules=[{"service": "network", "method": "GET",
                                               "path": "/v2.0/networks"}])
    assert [r["id"] for r in again.access_rules] == [rules[0].id]
    conn.identity.delete_application_credential(user_id, cred.id)
    conn.identity.delete_application_credential(user_id, again.id)
    # as Keystone, the rule outlives its credentials until deleted
    assert [r.id for r in conn.identity.access_rules(user_id)] == [rules[0].id]
    conn.identity.delete_access_rule(user_id, rules[0].id)
    assert list(conn.identity.access_rules(user_id)) == []


def test_sdk_list_filters_and_project_tags(cloud):
    admin = cloud.sdk()
    stem = uuid.uuid4().hex[:6]
    made = {
        "ab": admin.identity.create_project(name=f"Filter-{stem}-ab", tags=["a", "b"]),
        "a": admin.identity.create_project(name=f"filter-{stem}-a", tags=["a"]),
        "c": admin.identity.create_project(name=f"other-{stem}-c", tags=["c"]),
    }
    ids = {v.id: k for k, v in made.items()}

    def names(**query: Any) -> set[str]:
        return {ids[p.id] for p in admin.identity.projects(**query) if p.id in ids}

    assert names(tags="a,b") == {"ab"}
    assert names(any_tags="b,c") == {"ab", "c"}
    assert names(not_tags="a,b") == {"a", "c"}
    assert names(not_any_tags="a") == {"c"}

    def raw(query: str) -> set[str]:
        body = admin.identity.get(f"/projects?{query}").json()
        return {ids[p["id"]] for p in body["projects"] if p["id"] in ids}

    assert raw(f"name__startswith=filter-{stem}") == {"a"}  # case-sensitive
    assert raw(f"name__istartswith=filter-{stem}") == {"ab", "a"}
    assert raw(f"name__contains={stem}-a") == {"ab", "a"}
    assert raw("name__iendswith=-AB") == {"ab"}
    users = admin.identity.get("/users?name__icontains=DMI").json()["users"]
    assert "admin" in {u["name"] for u in users}

    project = made["c"]
    project.add_tag(admin.identity, "d")
    project.check_tag(admin.identity, "d")
    project.set_tags(admin.identity, ["x", "y"])
    assert sorted(admin.identity.get_project(project.id).tags) == ["x", "y"]
    project.remove_tag(admin.identity, "x")
    assert admin.identity.get(f"/projects/{project.id}/tags").json()["tags"] == ["y"]
    project.remove_all_tags(admin.identity)
    assert admin.identity.get_project(project.id).tags == []
    for p in made.values():
        admin.identity.delete_project(p)


@sqlite_only
def test_cli_catalog_domain_and_ec2(cloud):
    """The CLI's calls for the same features, a few commands (each costs a client run)."""
    c = cloud
    region = _name("cli-region")
    c.cli("region", "create", region, "--description", "by the CLI", parse=False)
    service = c.cli("service", "create", "--name", "cli-svc", "x-cli", "-f", "json")
    endpoint = c.cli("endpoint", "create", "--region", region, service["id"], "public",
                     "http://127.0.0.1:9/cli", "-f", "json")
    assert endpoint["region"] == region
    c.cli("endpoint", "delete", endpoint["id"], parse=False)
    c.cli("service", "delete", service["id"], parse=False)
    c.cli("region", "delete", region, parse=False)
    domain = _name("cli-dom")
    c.cli("domain", "create", domain, parse=False)
    c.cli("domain", "set", "--disable", domain, parse=False)
    c.cli("domain", "delete", domain, parse=False)
    ec2 = c.cli("ec2", "credentials", "create", "-f", "json")
    listed = c.cli("ec2", "credentials", "list", "-f", "json")
    assert ec2["access"] in {row["Access"] for row in listed}
    c.cli("ec2", "credentials", "delete", ec2["access"], parse=False)


@sqlite_only
def test_cli_roles_trusts_credentials_and_tags(cloud):
    c = cloud
    domain = _name("cli-dom")
    c.cli("domain", "create", domain, parse=False)
    dsr = c.cli("role", "create", "--domain", domain, "ops", "-f", "json")
    assert dsr["domain_id"] and dsr["name"] == "ops"
    assert [r["Name"] for r in c.cli("role", "list", "--domain", domain, "-f", "json")] == ["ops"]
    # the CLI finds implied roles' ends among the global roles (GET /v3/roles)
    role = c.cli("role", "create", _name("cli-ops"), "-f", "json")
    implied = c.cli("implied", "role", "create", role["id"], "--implied-role", "reader",
                    "-f", "json")
    assert implied["prior_role"] == role["id"]
    rows = c.cli("implied", "role", "list", "-f", "json")
    assert any(r["Prior Role ID"] == role["id"] for r in rows)
    c.cli("implied", "role", "delete", role["id"], "--implied-role", "reader", parse=False)

    trust = c.cli("trust", "create", "--project", "admin", "--role", "member",
                  "--impersonate", "admin", "demo", "-f", "json")
    assert trust["is_impersonation"] is True and trust["project_id"]
    assert trust["id"] in {t["ID"] for t in c.cli("trust", "list", "-f", "json")}
    assert c.cli("trust", "show", trust["id"], "-f", "json")["project_id"]
    c.cli("trust", "delete", trust["id"], parse=False)

    cred = c.cli("credential", "create", "--type", "totp", "admin", "GEZDGNBVGY3TQOJQ",
                 "-f", "json")
    assert cred["id"] in {x["ID"] for x in c.cli("credential", "list", "-f", "json")}
    c.cli("credential", "delete", cred["id"], parse=False)

    project = _name("cli-tagged")
    c.cli("project", "create", "--tag", "gold", "--tag", "fast", project, parse=False)
    tagged = {p["Name"] for p in c.cli("project", "list", "--tags", "gold,fast", "-f", "json")}
    assert project in tagged
    untagged = {p["Name"] for p in c.cli("project", "list", "--not-tags-any", "gold",
                                         "-f", "json")}
    assert project not in untagged and "admin" in untagged
    c.cli("project", "delete", project, parse=False)
    c.cli("domain", "set", "--disable", domain, parse=False)
    c.cli("domain", "delete", domain, parse=False)
