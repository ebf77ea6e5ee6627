"""Keystone's wider API: the error answers (status and message) of catalog management,
domains, domain-specific and implied roles, credentials, EC2 logins, trusts, policies,
access rules, tags and list filters (issue 23, Identity). The happy paths run through
the clients in tests/clients/test_identity_breadth_clients.py."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.conftest import DEMO_PASSWORD

V3 = "/identity/v3"
# Keystone's 401s are security errors: the body never says why
GENERIC_401 = "The request you have made requires authentication."


def _id() -> str:
    return uuid.uuid4().hex[:8]


def _message(r: Any) -> str:
    return r.json()["error"]["message"]


def _ids(api: Any) -> dict[str, str]:
    users = {u["name"]: u["id"] for u in api.get(f"{V3}/users").json()["users"]}
    projects = {p["name"]: p["id"] for p in api.get(f"{V3}/projects").json()["projects"]}
    roles = {r["name"]: r["id"] for r in api.get(f"{V3}/roles").json()["roles"]}
    return {"admin": users["admin"], "demo": users["demo"], "admin_project": projects["admin"],
            "demo_project": projects["demo"], **{f"role_{k}": v for k, v in roles.items()}}


def test_region_errors(api):
    parent, child = f"r-{_id()}", f"r-{_id()}"
    assert api.post(f"{V3}/regions", json={"region": {"id": parent}}).status_code == 201
    r = api.post(f"{V3}/regions", json={"region": {"id": parent}})
    assert r.status_code == 409 and "Duplicate ID" in _message(r)
    r = api.post(f"{V3}/regions", json={"region": {"parent_region_id": "nowhere"}})
    assert r.status_code == 404 and _message(r) == "Could not find region: nowhere."
    r = api.put(f"{V3}/regions/{child}", json={"region": {"parent_region_id": parent}})
    assert r.status_code == 201 and r.json()["region"]["id"] == child
    r = api.patch(f"{V3}/regions/{parent}", json={"region": {"parent_region_id": child}})
    assert r.status_code == 400 and "circular region hierarchy" in _message(r)
    r = api.patch(f"{V3}/regions/{parent}", json={"region": {"id": "renamed"}})
    assert r.status_code == 400
    svc = api.post(f"{V3}/services", json={"service": {"type": "t"}}).json()["service"]
    ep = api.post(f"{V3}/endpoints", json={"endpoint": {
        "service_id": svc["id"], "interface": "public", "url": "http://127.0.0.1:9",
        "region_id": child}}).json()["endpoint"]
    r = api.delete(f"{V3}/regions/{parent}")
    assert r.status_code == 403 and "have associated endpoints" in _message(r)
    assert api.delete(f"{V3}/endpoints/{ep['id']}").status_code == 204
    assert api.delete(f"{V3}/regions/{parent}").status_code == 204
    assert api.get(f"{V3}/regions/{child}").status_code == 404  # went with its parent
    assert api.get(f"{V3}/regions/{parent}", user="demo").status_code == 404  # any token reads


def test_service_and_endpoint_errors(api):
    r = api.post(f"{V3}/services", json={"service": {"name": "no type"}})
    assert r.status_code == 400 and "'type' is a required property" in _message(r)
    svc = api.post(f"{V3}/services", json={"service": {"type": "t2"}}).json()["service"]
    base = {"service_id": svc["id"], "interface": "public", "url": "http://127.0.0.1:9"}
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "interface": "outside"}})
    assert r.status_code == 400
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "url": "http://h/%(nope)s"}})
    assert r.status_code == 400 and "invalid URL" in _message(r)
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "url": "http://h/$(project_id)s"}})
    assert r.status_code == 201  # the legacy spelling, substituted in catalogs
    catalog = api.get(f"{V3}/auth/catalog").json()["catalog"]
    urls = [e["url"] for s in catalog if s["id"] == svc["id"] for e in s["endpoints"]]
    assert urls == [f"http://h/{_ids(api)['admin_project']}"]  # the admin token's project
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "service_id": "nope"}})
    assert r.status_code == 400 and "endpoint service_id in service table" in _message(r)
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "region_id": "nope"}})
    assert r.status_code == 400 and "endpoint region_id in region table" in _message(r)
    # the legacy `region` names a region, made when missing (as Keystone)
    legacy = f"legacy-{_id()}"
    r = api.post(f"{V3}/endpoints", json={"endpoint": {**base, "region": legacy}})
    assert r.status_code == 201 and r.json()["endpoint"]["region_id"] == legacy
    assert api.get(f"{V3}/regions/{legacy}").status_code == 200
    assert api.delete(f"{V3}/services/{svc['id']}").status_code == 204
    assert api.get(f"{V3}/endpoints/{r.json()['endpoint']['id']}").status_code == 404
    assert api.post(f"{V3}/services", user="demo", json={"service": {"type": "x"}}
                    ).status_code == 403


def test_domain_errors_and_disabling(api):
    name = f"d-{_id()}"
    domain = api.post(f"{V3}/domains", json={"domain": {"name": name}}).json()["domain"]
    r = api.post(f"{V3}/domains", json={"domain": {"name": name}})
    assert r.status_code == 409
    r = api.delete(f"{V3}/domains/{domain['id']}")
    assert r.status_code == 403
    assert _message(r) == "Cannot delete a domain that is enabled, please disable it first."
    assert api.patch(f"{V3}/domains/default", json={"domain": {"enabled": False}}
                     ).status_code == 403
    # disabling a domain ends its users' tokens
    user = api.post(f"{V3}/users", json={"user": {
        "name": "u", "password": "pw-secret", "domain_id": domain["id"]}}).json()["user"]
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": user["id"], "password": "pw-secret"}}}}}
    token = api.client.post(f"{V3}/auth/tokens", json=body).headers["X-Subject-Token"]
    assert api.request("GET", f"{V3}/auth/projects", token=token).status_code == 200
    api.patch(f"{V3}/domains/{domain['id']}", json={"domain": {"enabled": False}})
    assert api.request("GET", f"{V3}/auth/projects", token=token).status_code == 401
    assert api.client.post(f"{V3}/auth/tokens", json=body).status_code == 401
    assert api.delete(f"{V3}/domains/{domain['id']}").status_code == 204
    assert api.get(f"{V3}/users/{user['id']}").status_code == 404


def test_domain_specific_and_implied_role_errors(api):
    ids = _ids(api)
    d1 = api.post(f"{V3}/domains", json={"domain": {"name": f"d-{_id()}"}}).json()["domain"]
    d2 = api.post(f"{V3}/domains", json={"domain": {"name": f"d-{_id()}"}}).json()["domain"]
    dsr = api.post(f"{V3}/roles", json={"role": {"name": "ops", "domain_id": d1["id"]}}
                   ).json()["role"]
    assert api.post(f"{V3}/roles", json={"role": {"name": "ops", "domain_id": d1["id"]}}
                    ).status_code == 409
    assert api.post(f"{V3}/roles", json={"role": {"name": "ops", "domain_id": d2["id"]}}
                    ).status_code == 201
    assert api.post(f"{V3}/roles", json={"role": {"name": "x", "domain_id": "nope"}}
                    ).status_code == 404
    assert "ops" not in {r["name"] for r in api.get(f"{V3}/roles").json()["roles"]}
    r = api.put(f"{V3}/roles/{ids['role_member']}/implies/{dsr['id']}")
    assert r.status_code == 403 and "cannot be an implied roles" in _message(r)
    r = api.put(f"{V3}/roles/{ids['role_reader']}/implies/{ids['role_admin']}")
    assert r.status_code == 400  # admin implies reader already: a cycle
    r = api.get(f"{V3}/roles/{dsr['id']}/implies/{ids['role_reader']}")
    assert r.status_code == 404 and "does not imply" in _message(r)
    assert api.put(f"{V3}/roles/{dsr['id']}/implies/{ids['role_reader']}").status_code == 201
    # granted on its domain, it lists as itself, and effectively only as what it implies
    user = api.post(f"{V3}/users", json={"user": {"name": f"u-{_id()}", "domain_id": d1["id"]}}
                    ).json()["user"]["id"]
    assert api.put(f"{V3}/domains/{d1['id']}/users/{user}/roles/{dsr['id']}").status_code == 204
    rows = api.get(f"{V3}/role_assignments?user.id={user}").json()["role_assignments"]
    assert [r["role"]["id"] for r in rows] == [dsr["id"]]
    rows = api.get(f"{V3}/role_assignments?user.id={user}&effective").json()["role_assignments"]
    assert [(r["role"]["id"], r["scope"]) for r in rows] == [
        (ids["role_reader"], {"domain": {"id": d1["id"]}})]
    assert api.request("HEAD", f"{V3}/roles/{dsr['id']}/implies/{ids['role_reader']}"
                       ).status_code == 204
    r = api.put(f"{V3}/projects/{ids['demo_project']}/users/{ids['demo']}/roles/{dsr['id']}")
    assert r.status_code == 403 and "must be in the same domain as the role" in _message(r)
    r = api.patch(f"{V3}/roles/{dsr['id']}", json={"role": {"domain_id": d2["id"]}})
    assert r.status_code == 400
    r = api.patch(f"{V3}/roles/{dsr['id']}", json={"role": {"description": "ops people"}})
    assert r.json()["role"]["description"] == "ops people"


def test_credential_errors_and_ownership(api):
    ids = _ids(api)
    base = {"type": "ec2", "user_id": ids["demo"], "project_id": ids["demo_project"]}
    r = api.post(f"{V3}/credentials", json={"credential": {**base, "blob": "not json"}})
    assert r.status_code == 400 and _message(r) == "Invalid blob in credential"
    r = api.post(f"{V3}/credentials", json={"credential": {**base, "blob": '{"secret": "s"}'}})
    assert r.status_code == 400 and "Expecting to find access in credential" in _message(r)
    blob = json.dumps({"access": _id(), "secret": "s"})
    mine = api.post(f"{V3}/credentials", user="demo", json={"credential": {**base, "blob": blob}})
    assert mine.status_code == 201
    r = api.post(f"{V3}/credentials", json={"credential": {**base, "blob": blob}})
    assert r.status_code == 409
    # a member manages its own credentials only
    r = api.post(f"{V3}/credentials", user="demo", json={"credential": {
        "type": "totp", "blob": "x", "user_id": ids["admin"]}})
    assert r.status_code == 403
    theirs = api.post(f"{V3}/credentials", json={"credential": {
        "type": "totp", "blob": "x", "user_id": ids["admin"]}}).json()["credential"]
    assert api.get(f"{V3}/credentials/{theirs['id']}", user="demo").status_code == 403
    assert api.get(f"{V3}/credentials/absent", user="demo").status_code == 403
    assert api.get(f"{V3}/credentials/absent").status_code == 404
    listed = api.get(f"{V3}/credentials", user="demo").json()["credentials"]
    assert {c["user_id"] for c in listed} == {ids["demo"]}
    r = api.patch(f"{V3}/credentials/{mine.json()['credential']['id']}", user="demo",
                  json={"credential": {"blob": json.dumps({"access": "other", "secret": "s"})}})
    assert r.status_code == 400  # an EC2 credential's id is its access key's hash


def test_ec2token_errors(api):
    ids = _ids(api)
    r = api.client.post(f"{V3}/ec2tokens", json={})
    assert r.status_code == 400 and _message(r) == "request must include a request body"
    r = api.client.post(f"{V3}/ec2tokens", json={"credentials": {"signature": "x"}})
    assert r.status_code == 401 and _message(r) == GENERIC_401
    assert api.client.get(f"{V3}/ec2tokens").status_code == 405
    creds = {"access": "unknown", "signature": "x", "host": "h", "verb": "GET", "path": "/",
             "params": {"SignatureVersion": "2"}}
    r = api.client.post(f"{V3}/ec2tokens", json={"credentials": creds})
    assert r.status_code == 404 and _message(r) == "EC2 access key not found."
    cred = api.post(f"{V3}/users/{ids['admin']}/credentials/OS-EC2",
                    json={"tenant_id": ids["admin_project"]}).json()["credential"]
    from keystoneclient.contrib.ec2.utils import Ec2Signer

    old = {**creds, "access": cred["access"],
           "params": {"SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
                      "Timestamp": "2020-01-01T00:00:00Z"}}
    old["signature"] = Ec2Signer(cred["secret"]).generate(old)
    r = api.client.post(f"{V3}/ec2tokens", json={"credentials": old})
    assert r.status_code == 401 and _message(r) == GENERIC_401  # expired
    r = api.client.post(f"{V3}/ec2tokens", json={"credentials": {**old, "signature": None}})
    assert r.status_code == 401 and _message(r) == GENERIC_401
    # a token from an EC2 login makes no further credentials nor trusts
    fresh = {**old, "params": {"SignatureVersion": "2", "SignatureMethod": "HmacSHA256"}}
    fresh["signature"] = Ec2Signer(cred["secret"]).generate(fresh)
    r = api.client.post(f"{V3}/ec2tokens", json={"credentials": fresh})
    assert r.status_code == 200, r.text
    minted = r.headers["X-Subject-Token"]
    assert r.json()["token"]["methods"] == ["ec2credential"]
    r = api.request("POST", f"{V3}/users/{ids['admin']}/credentials/OS-EC2", token=minted,
                    json={"tenant_id": ids["admin_project"]})
    assert r.status_code == 403
    r = api.request("POST", f"{V3}/OS-TRUST/trusts", token=minted, json={"trust": {
        "trustor_user_id": ids["admin"], "trustee_user_id": ids["demo"],
        "impersonation": False}})
    assert r.status_code == 403
    r = api.post(f"{V3}/users/{ids['admin']}/credentials/OS-EC2", json={"tenant_id": "nope"})
    assert r.status_code == 404
    assert api.get(f"{V3}/users/{ids['admin']}/credentials/OS-EC2/unknown").status_code == 404
    assert api.get(f"{V3}/users/{ids['admin']}/credentials/OS-EC2", user="demo"
                   ).status_code == 403


def _trust(api: Any, ids: dict[str, str], user: str = "admin", **extra: Any) -> Any:
    body = {"trustor_user_id": ids[user], "trustee_user_id": ids["demo"], "impersonation": False,
            "project_id": ids["admin_project"], "roles": [{"name": "reader"}], **extra}
    return api.post(f"{V3}/OS-TRUST/trusts", user=user, json={"trust": body})


def _trust_login(api: Any, trust_id: str) -> Any:
    return api.client.post(f"{V3}/auth/tokens", json={"auth": {"identity": {
        "methods": ["password"], "password": {"user": {
            "name": "demo", "domain": {"id": "default"}, "password": DEMO_PASSWORD}}},
        "scope": {"OS-TRUST:trust": {"id": trust_id}}}})


def test_trust_errors(api):
    ids = _ids(api)
    r = _trust(api, ids, trustor_user_id=ids["demo"])
    assert r.status_code == 403 and _message(r) == (
        "You are not authorized to perform the requested action: The authenticated user should "
        "match the trustor.")
    assert _trust(api, ids, roles=[]).status_code == 403  # a project needs a role
    assert _trust(api, ids, roles=[{"name": "nope"}]).status_code == 404
    assert _trust(api, ids, remaining_uses=0).status_code == 400
    assert _trust(api, ids, trustee_user_id="nope").status_code == 404
    assert _trust(api, ids, expires_at="2001-01-01T00:00:00Z").status_code == 400
    r = api.post(f"{V3}/OS-TRUST/trusts", user="demo", json={"trust": {
        "trustor_user_id": ids["demo"], "trustee_user_id": ids["admin"], "impersonation": False,
        "project_id": ids["demo_project"], "roles": [{"name": "admin"}]}})
    assert r.status_code == 404  # not a role the trustor holds there (Keystone: not found)
    trust = _trust(api, ids, remaining_uses=1).json()["trust"]
    assert api.get(f"{V3}/OS-TRUST/trusts", user="demo").status_code == 403  # unfiltered
    assert api.get(f"{V3}/OS-TRUST/trusts?trustee_user_id={ids['demo']}", user="demo"
                   ).status_code == 200
    r = _trust_login(api, trust["id"])
    assert r.status_code == 201, r.text
    token = r.headers["X-Subject-Token"]
    body = r.json()["token"]
    assert body["user"]["id"] == ids["demo"] and body["project"]["id"] == ids["admin_project"]
    assert [x["name"] for x in body["roles"]] == ["reader"]
    # a trust-scoped token is neither rescoped nor used to make more trusts
    r = api.client.post(f"{V3}/auth/tokens", json={"auth": {"identity": {
        "methods": ["token"], "token": {"id": token}},
        "scope": {"project": {"id": ids["demo_project"]}}}})
    assert r.status_code == 401
    r = api.request("POST", f"{V3}/OS-TRUST/trusts", token=token, json={"trust": {
        "trustor_user_id": ids["demo"], "trustee_user_id": ids["admin"], "impersonation": False}})
    assert r.status_code == 403
    r = _trust_login(api, trust["id"])  # its one use is spent
    assert r.status_code == 401
    assert api.get(f"{V3}/OS-TRUST/trusts/{trust['id']}/roles/{ids['role_admin']}"
                   ).status_code == 404
    assert api.request("HEAD", f"{V3}/OS-TRUST/trusts/{trust['id']}/roles/{ids['role_reader']}"
                       ).status_code == 200


def test_policy_and_access_rule_errors(api):
    ids = _ids(api)
    r = api.post(f"{V3}/policies", json={"policy": {"type": "application/json"}})
    assert r.status_code == 400 and "'blob' is a required property" in _message(r)
    assert api.get(f"{V3}/policies/nope").status_code == 404
    made = api.post(f"{V3}/policies", json={"policy": {"type": "application/x-yaml",
                                                       "blob": "{}"}}).json()["policy"]
    listed = api.get(f"{V3}/policies?type__icontains=X-YAML").json()["policies"]
    assert [p["id"] for p in listed] == [made["id"]]
    assert api.get(f"{V3}/policies?type__contains=X-YAML").json()["policies"] == []
    assert api.get(f"{V3}/policies", user="demo").status_code == 403
    r = api.get(f"{V3}/users/{ids['demo']}/access_rules/nope")
    assert r.status_code == 404 and _message(r) == "Could not find Access Rule: nope."
    assert api.get(f"{V3}/users/{ids['admin']}/access_rules", user="demo").status_code == 403
    assert api.get(f"{V3}/users/{ids['demo']}/access_rules", user="demo").json()[
        "access_rules"] == []


def test_tag_errors_and_literal_filter_characters(api):
    ids = _ids(api)
    project = ids["demo_project"]
    r = api.put(f"{V3}/projects/{project}/tags/a,b")
    assert r.status_code == 400 and "'/' or ','" in _message(r)
    r = api.put(f"{V3}/projects/{project}/tags", json={"tags": [f"t{i}" for i in range(81)]})
    assert r.status_code == 400
    r = api.post(f"{V3}/projects", json={"project": {"name": f"p-{_id()}", "tags": ["x/y"]}})
    assert r.status_code == 400
    r = api.get(f"{V3}/projects/{project}/tags/absent")
    assert r.status_code == 404 and _message(r) == "Could not find project tag: absent."
    assert api.delete(f"{V3}/projects/{project}/tags/absent").status_code == 404
    assert api.get(f"{V3}/projects/{project}/tags", user="demo").status_code == 200  # its own
    assert api.put(f"{V3}/projects/{project}/tags/x", user="demo").status_code == 403
    # LIKE's wildcards are plain characters in a filter
    odd = api.post(f"{V3}/projects", json={"project": {"name": f"50%_off-{_id()}"}})
    names = {p["name"] for p in api.get(f"{V3}/projects?name__contains=%25_").json()["projects"]}
    assert names == {odd.json()["project"]["name"]}


def test_inexact_filters_on_groups_roles_domains_and_services(api):
    stem = _id()
    for name in (f"Ops-{stem}", f"ops-{stem}-b"):
        assert api.post(f"{V3}/groups", json={"group": {"name": name}}).status_code == 201
        assert api.post(f"{V3}/roles", json={"role": {"name": name}}).status_code == 201
        assert api.post(f"{V3}/domains", json={"domain": {"name": name}}).status_code == 201
        assert api.post(f"{V3}/services", json={"service": {"type": "t", "name": name}}
                        ).status_code == 201
    for collection in ("groups", "roles", "domains", "services"):
        def names(query: str, collection: str = collection) -> list[str]:
            body = api.get(f"{V3}/{collection}?{query}").json()
            return sorted(x["name"] for x in body[collection])

        assert names(f"name__startswith=ops-{stem}") == [f"ops-{stem}-b"], collection
        assert names(f"name__istartswith=OPS-{stem}") == [f"Ops-{stem}", f"ops-{stem}-b"]
        assert names(f"name__endswith={stem}") == [f"Ops-{stem}"], collection


def test_a_trust_token_ends_when_the_trustor_loses_the_role(api):
    """Without impersonation the token is the trustee's, yet it rests on the trustor's
    roles: revoking the trustor's grant ends it (and new ones are refused)."""
    ids = _ids(api)
    project = api.post(f"{V3}/projects", json={"project": {"name": f"p-{_id()}"}}
                       ).json()["project"]["id"]
    grant = f"{V3}/projects/{project}/users/{ids['admin']}/roles/{ids['role_member']}"
    assert api.put(grant).status_code == 204
    trust = api.post(f"{V3}/OS-TRUST/trusts", json={"trust": {
        "trustor_user_id": ids["admin"], "trustee_user_id": ids["demo"], "impersonation": False,
        "project_id": project, "roles": [{"name": "member"}]}}).json()["trust"]
    r = _trust_login(api, trust["id"])
    assert r.status_code == 201, r.text
    token = r.headers["X-Subject-Token"]
    assert api.request("GET", "/networking/v2.0/networks", token=token).status_code == 200
    assert api.delete(grant).status_code == 204
    assert api.request("GET", "/networking/v2.0/networks", token=token).status_code == 401
    assert _trust_login(api, trust["id"]).status_code == 401
    # the trustee's own token (on its own project) lives on
    assert api.get(f"{V3}/auth/projects", user="demo").status_code == 200


def test_values_longer_than_their_columns_are_400s(api):
    """PostgreSQL and MariaDB refuse what does not fit: a 400 first, never a 500."""
    ids = _ids(api)
    long = "x" * 300
    assert api.post(f"{V3}/regions", json={"region": {"id": long}}).status_code == 400
    assert api.put(f"{V3}/regions/{long}", json={"region": {}}).status_code == 400
    assert api.post(f"{V3}/services", json={"service": {"type": long}}).status_code == 400
    assert api.post(f"{V3}/policies", json={"policy": {"type": long, "blob": "{}"}}
                    ).status_code == 400
    assert api.post(f"{V3}/credentials", json={"credential": {
        "type": long, "blob": "x", "user_id": ids["admin"]}}).status_code == 400
    r = api.post(f"{V3}/domains", json={"domain": {"name": f"d-{_id()}",
                                                   "explicit_domain_id": long}})
    assert r.status_code == 400
    assert _message(r) == "Domain ID does not conform to required UUID format."
    explicit = uuid.uuid4().hex
    r = api.post(f"{V3}/domains", json={"domain": {"name": f"d-{_id()}",
                                                   "explicit_domain_id": explicit}})
    assert r.status_code == 201 and r.json()["domain"]["id"] == explicit
    assert _trust(api, ids, remaining_uses=2**40).status_code == 400


def test_restricted_application_credentials_manage_no_trusts(api):
    ids = _ids(api)
    made = {}
    for name, unrestricted in (("restricted", False), ("unrestricted", True)):
        cred = api.post(f"{V3}/users/{ids['admin']}/application_credentials", json={
            "application_credential": {"name": f"{name}-{_id()}", "unrestricted": unrestricted}}
        ).json()["application_credential"]
        r = api.client.post(f"{V3}/auth/tokens", json={"auth": {"identity": {
            "methods": ["application_credential"],
            "application_credential": {"id": cred["id"], "secret": cred["secret"]}}}})
        made[name] = r.headers["X-Subject-Token"]
    body = {"trust": {"trustor_user_id": ids["admin"], "trustee_user_id": ids["demo"],
                      "impersonation": False, "project_id": ids["admin_project"],
                      "roles": [{"name": "reader"}]}}
    r = api.request("POST", f"{V3}/OS-TRUST/trusts", token=made["restricted"], json=body)
    assert r.status_code == 403 and "not allowed for managing trusts" in _message(r)
    r = api.request("POST", f"{V3}/OS-TRUST/trusts", token=made["unrestricted"], json=body)
    assert r.status_code == 201, r.text
    trust = r.json()["trust"]["id"]
    r = api.request("DELETE", f"{V3}/OS-TRUST/trusts/{trust}", token=made["restricted"])
    assert r.status_code == 403
    r = api.request("DELETE", f"{V3}/OS-TRUST/trusts/{trust}", token=made["unrestricted"])
    assert r.status_code == 204


def test_s3tokens_check_s3_signatures(api):
    """POST /v3/s3tokens (the S3 middleware's check): `token` is the base64 of the string
    the client signed; HMAC-SHA1 or AWS4 (an s3 scope) with the credential's secret."""
    import base64
    import hashlib
    import hmac

    ids = _ids(api)
    cred = api.post(f"{V3}/users/{ids['admin']}/credentials/OS-EC2",
                    json={"tenant_id": ids["admin_project"]}).json()["credential"]
    secret = cred["secret"].encode()
    v1 = b"GET\n\n\nTue, 24 Nov 2026 19:00:00 +0000\n/bucket/key"
    v1_sig = base64.b64encode(hmac.new(secret, v1, hashlib.sha1).digest()).decode()
    scope = b"20261124/RegionOne/s3/aws4_request"
    v4 = b"AWS4-HMAC-SHA256\n20261124T190000Z\n" + scope + b"\n" + b"0" * 64
    key = b"AWS4" + secret
    for part in scope.split(b"/"):
        key = hmac.new(key, part, hashlib.sha256).digest()
    v4_sig = hmac.new(key, v4, hashlib.sha256).hexdigest()

    def s3(to_sign: bytes, signature: str) -> Any:
        return api.client.post(f"{V3}/s3tokens", json={"credentials": {
            "access": cred["access"], "token": base64.urlsafe_b64encode(to_sign).decode(),
            "signature": signature}})

    for to_sign, signature in ((v1, v1_sig), (v4, v4_sig)):
        r = s3(to_sign, signature)
        assert r.status_code == 200, r.text
        assert r.json()["token"]["project"]["id"] == ids["admin_project"]
        assert "X-Subject-Token" not in r.headers  # as Keystone: the body only
        assert s3(to_sign, "bad").status_code == 401
    ec2_scope = v4.replace(b"/s3/", b"/ec2/")
    assert s3(ec2_scope, v4_sig).status_code == 401  # only an S3 scope
