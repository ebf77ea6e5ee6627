"""Credentials that delegate, hardened: an EC2 credential is bound to the trust or the
application credential of the token that makes it, never to one its blob names, and its
logins are held to what it is bound to; application credential access rules of the wrong
shape are a 400, never a database error. On SQLite, PostgreSQL and MariaDB (the in-process
app per backend); the same stories through the `openstack` CLI are in
tests/clients/test_hardening_credentials_clients.py."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from stackling.identity.delegation_models import Credential
from tests.api.test_identity import assert_keystone_error
from tests.conftest import BACKENDS, create_database, drop_database, make_api

V3 = "/identity/v3"
GENERIC_401 = "The request you have made requires authentication."


@pytest.fixture(scope="module", params=BACKENDS)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Any]:
    """A fresh in-process cloud per backend for this module."""
    base = tmp_path_factory.mktemp(f"creds-{request.param}")
    if request.param == "sqlite":
        yield from make_api(base / "data")
        return
    url = create_database(request.param, base / "db")
    try:
        yield from make_api(base / "data", database_url=url)
    finally:
        drop_database(url)
        shutil.rmtree(base / "data", ignore_errors=True)


# ------------------------------------------------------------------ helpers
def _member(api: Any, role: str = "member") -> dict[str, Any]:
    """A fresh user holding `role` on a fresh project, with a token scoped there."""
    suffix = uuid.uuid4().hex[:8]
    project = api.post(f"{V3}/projects", json={"project": {"name": f"hp-{suffix}"}}
                       ).json()["project"]
    user = api.post(f"{V3}/users", json={"user": {"name": f"hu-{suffix}", "password": "pw"}}
                    ).json()["user"]
    roles = {r["name"]: r["id"] for r in api.get(f"{V3}/roles").json()["roles"]}
    r = api.put(f"{V3}/projects/{project['id']}/users/{user['id']}/roles/{roles[role]}")
    assert r.status_code == 204, r.text
    return {"user": user["id"], "project": project["id"], "token": _password_login(
        api, user["id"], {"project": {"id": project["id"]}})}


def _password_login(api: Any, user_id: str, scope: dict[str, Any]) -> str:
    r = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {"identity": {
        "methods": ["password"], "password": {"user": {"id": user_id, "password": "pw"}}},
        "scope": scope}})
    assert r.status_code == 201, r.text
    return r.headers["X-Subject-Token"]


def _trust(api: Any, trustor: dict[str, Any], trustee: str, impersonation: bool) -> str:
    r = api.post(f"{V3}/OS-TRUST/trusts", token=trustor["token"], json={"trust": {
        "trustor_user_id": trustor["user"], "trustee_user_id": trustee,
        "project_id": trustor["project"], "impersonation": impersonation,
        "roles": [{"name": "member"}]}})
    assert r.status_code == 201, r.text
    return r.json()["trust"]["id"]


def _app_cred(api: Any, owner: dict[str, Any], **values: Any) -> dict[str, Any]:
    r = api.post(f"{V3}/users/{owner['user']}/application_credentials", token=owner["token"],
                 json={"application_credential": {"name": f"ac-{uuid.uuid4().hex[:8]}",
                                                  **values}})
    assert r.status_code == 201, r.text
    cred = r.json()["application_credential"]
    r = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": cred["id"], "secret": cred["secret"]}}}})
    assert r.status_code == 201, r.text
    return {**cred, "token": r.headers["X-Subject-Token"]}


def _signed(access: str, secret: str) -> dict[str, Any]:
    """An EC2 request (signature version 2) signed as an EC2 client signs it."""
    from keystoneclient.contrib.ec2.utils import Ec2Signer

    creds = {"access": access, "host": "127.0.0.1:8773", "verb": "GET", "path": "/",
             "params": {"SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
                        "Action": "DescribeInstances"}}
    creds["signature"] = Ec2Signer(secret).generate(creds)
    return creds


def ec2_login(api: Any, access: str, secret: str) -> Any:
    return api.post(f"{V3}/ec2tokens", user=None, json={"credentials": _signed(access, secret)})


def _blob(r: Any) -> dict[str, Any]:
    assert r.status_code in (200, 201), r.text
    return json.loads(r.json()["credential"]["blob"])


# ------------------------------------------------------------------ item 6: trusts
def test_a_trust_id_in_a_blob_is_not_taken(api):
    """Another project's member stores an EC2 credential whose blob names the victim's
    trust: the blob keeps no trust (nor application credential) the creating token did not
    carry, its login is the member's own, and a PATCH cannot add one."""
    victim, mallory = _member(api), _member(api)
    trustee = _member(api)
    trust = _trust(api, victim, trustee["user"], impersonation=True)
    victim_cred = _app_cred(api, victim)
    access, secret = uuid.uuid4().hex, uuid.uuid4().hex
    r = api.post(f"{V3}/credentials", token=mallory["token"], json={"credential": {
        "type": "ec2", "user_id": mallory["user"], "project_id": mallory["project"],
        "blob": json.dumps({"access": access, "secret": secret, "trust_id": trust,
                            "app_cred_id": victim_cred["id"]})}})
    blob = _blob(r)
    assert {k: blob[k] for k in ("access", "secret")} == {"access": access, "secret": secret}
    assert "trust_id" not in blob and "app_cred_id" not in blob, blob
    r = ec2_login(api, access, secret)
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert token["user"]["id"] == mallory["user"]
    assert token["project"]["id"] == mallory["project"]
    assert "OS-TRUST:trust" not in token and "application_credential" not in token
    r = api.post("/networking/v2.0/networks", token=r.headers["X-Subject-Token"],
                 json={"network": {"name": "stolen", "project_id": victim["project"]}})
    assert r.status_code == 400 and "requires admin privileges" in r.text, r.text  # Neutron's
    # the OS-EC2 route takes no trust from its body either
    r = api.post(f"{V3}/users/{mallory['user']}/credentials/OS-EC2", token=mallory["token"],
                 json={"tenant_id": mallory["project"], "trust_id": trust})
    assert r.status_code == 201 and r.json()["credential"]["trust_id"] is None, r.text
    # a PATCH neither adds nor changes a trust or an application credential (Keystone's 400)
    cred_id = api.get(f"{V3}/credentials?user_id={mallory['user']}&type=ec2",
                      token=mallory["token"]).json()["credentials"]
    cred_id = next(c["id"] for c in cred_id if json.loads(c["blob"])["access"] == access)
    for key, value in (("trust_id", trust), ("app_cred_id", victim_cred["id"])):
        r = api.patch(f"{V3}/credentials/{cred_id}", token=mallory["token"], json={
            "credential": {"blob": json.dumps({**blob, key: value})}})
        err = assert_keystone_error(r, 400)
        assert err["message"] == f"{key} can not be updated for credential"
    r = api.patch(f"{V3}/credentials/{cred_id}", token=mallory["token"], json={
        "credential": {"blob": json.dumps({**blob, "secret": "rotated"})}})
    assert _blob(r)["secret"] == "rotated"  # the rest of the blob still changes


def test_an_ec2_login_through_a_trust_is_for_its_trustee_only(api):
    """A credential row naming a trust its owner is no party to (stored before this fix,
    or written around the API) logs in as nobody: 403, as Keystone's 'User is not a
    trustee'. The trustee's own credentials, made with its trust-scoped token, still log
    in through the trust."""
    victim, mallory, trustee = _member(api), _member(api), _member(api)
    for impersonation in (True, False):
        trust = _trust(api, victim, trustee["user"], impersonation)
        access, secret = uuid.uuid4().hex, uuid.uuid4().hex
        with api.runtime.db.transaction() as db:
            db.add(Credential(
                id=hashlib.sha256(access.encode()).hexdigest(),
                user_id=mallory["user"], project_id=mallory["project"], type="ec2",
                blob=json.dumps({"access": access, "secret": secret, "trust_id": trust}),
                extra={}))
        r = ec2_login(api, access, secret)
        err = assert_keystone_error(r, 403)
        assert err["message"] == "You are not authorized to perform the requested action."

        trust_token = _password_login(api, trustee["user"], {"OS-TRUST:trust": {"id": trust}})
        acting = victim["user"] if impersonation else trustee["user"]
        r = api.post(f"{V3}/users/{acting}/credentials/OS-EC2", token=trust_token,
                     json={"tenant_id": victim["project"]})
        assert r.status_code == 201, r.text
        made = r.json()["credential"]
        assert made["trust_id"] == trust and made["user_id"] == acting
        r = ec2_login(api, made["access"], made["secret"])
        assert r.status_code == 200, r.text
        token = r.json()["token"]
        assert token["OS-TRUST:trust"]["id"] == trust
        assert token["user"]["id"] == acting and token["project"]["id"] == victim["project"]


# ------------------------------------------------------------------ item 7: app creds
def test_an_ec2_credential_made_with_an_application_credential_is_bound_to_it(api):
    """Limited to `reader`, expiring in an hour: the EC2 credential it makes (either route)
    logs in as an application credential token (its roles, its expiry), and no longer once
    the application credential is deleted; the tokens of those logins end with it."""
    owner = _member(api)
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).replace(microsecond=0)
    cred = _app_cred(api, owner, roles=[{"name": "reader"}],
                     expires_at=expires.strftime("%Y-%m-%dT%H:%M:%SZ"))
    r = api.post(f"{V3}/users/{owner['user']}/credentials/OS-EC2", token=cred["token"],
                 json={"tenant_id": owner["project"]})
    assert r.status_code == 201, r.text
    ec2 = r.json()["credential"]
    ec2_id = hashlib.sha256(ec2["access"].encode()).hexdigest()
    shown = api.get(f"{V3}/credentials/{ec2_id}", token=owner["token"])
    assert _blob(shown)["app_cred_id"] == cred["id"]
    access, secret = uuid.uuid4().hex, uuid.uuid4().hex
    r = api.post(f"{V3}/credentials", token=cred["token"], json={"credential": {
        "type": "ec2", "user_id": owner["user"],
        "blob": json.dumps({"access": access, "secret": secret})}})
    v3_blob = _blob(r)
    assert v3_blob["app_cred_id"] == cred["id"]
    assert r.json()["credential"]["project_id"] == owner["project"]
    minted = []
    for key, sec in ((ec2["access"], ec2["secret"]), (access, secret)):
        r = ec2_login(api, key, sec)
        assert r.status_code == 200, r.text
        token = r.json()["token"]
        assert [x["name"] for x in token["roles"]] == ["reader"]
        assert token["application_credential"]["id"] == cred["id"]
        assert token["methods"] == ["ec2credential"]
        ends = dt.datetime.strptime(token["expires_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
        assert ends.replace(tzinfo=dt.UTC) <= expires
        minted.append(r.headers["X-Subject-Token"])
    r = api.post("/networking/v2.0/networks", token=minted[0], json={"network": {"name": "n"}})
    assert r.status_code == 403, r.text  # a reader makes no network
    assert api.get("/networking/v2.0/networks", token=minted[0]).status_code == 200
    # a PATCH cannot unbind it
    r = api.patch(f"{V3}/credentials/{ec2_id}", token=owner["token"],
                  json={"credential": {"blob": json.dumps({"access": ec2["access"],
                                                           "secret": ec2["secret"]})}})
    assert assert_keystone_error(r, 400)["message"] == (
        "app_cred_id can not be updated for credential")
    r = api.delete(f"{V3}/users/{owner['user']}/application_credentials/{cred['id']}",
                   token=owner["token"])
    assert r.status_code == 204, r.text
    for key, sec in ((ec2["access"], ec2["secret"]), (access, secret)):
        r = ec2_login(api, key, sec)
        assert assert_keystone_error(r, 401)["message"] == GENERIC_401
    for token_id in minted:
        assert_keystone_error(api.get("/networking/v2.0/networks", token=token_id), 401)


def test_an_ec2_login_keeps_the_application_credential_s_access_rules(api):
    owner = _member(api)
    cred = _app_cred(api, owner, access_rules=[
        {"service": "identity", "method": "POST", "path": "/v3/users/*/credentials/OS-EC2"},
        {"service": "network", "method": "GET", "path": "/v2.0/networks"}])
    r = api.post(f"{V3}/users/{owner['user']}/credentials/OS-EC2", token=cred["token"],
                 json={"tenant_id": owner["project"]})
    assert r.status_code == 201, r.text
    r = ec2_login(api, r.json()["credential"]["access"], r.json()["credential"]["secret"])
    assert r.status_code == 200, r.text
    assert [a["path"] for a in r.json()["token"]["application_credential"]["access_rules"]
            ] == ["/v3/users/*/credentials/OS-EC2", "/v2.0/networks"]
    token = r.headers["X-Subject-Token"]
    assert api.get("/networking/v2.0/networks", token=token).status_code == 200
    for method, url in (("POST", "/networking/v2.0/networks"), ("GET", "/compute/v2.1/flavors"),
                        ("GET", f"{V3}/auth/projects")):
        r = api.request(method, url, token=token, json={"network": {"name": "n"}})
        assert assert_keystone_error(r, 401)["message"] == GENERIC_401, (method, url)


def test_an_ec2_credential_bound_to_another_project_s_application_credential(api):
    """Made with an application credential token for another project than the
    credential's: its login is refused (Keystone: the projects do not match)."""
    owner = _member(api)
    other = api.post(f"{V3}/projects", json={"project": {"name": f"hp-{uuid.uuid4().hex[:8]}"}}
                     ).json()["project"]["id"]
    roles = {r["name"]: r["id"] for r in api.get(f"{V3}/roles").json()["roles"]}
    api.put(f"{V3}/projects/{other}/users/{owner['user']}/roles/{roles['member']}")
    cred = _app_cred(api, owner)
    r = api.post(f"{V3}/users/{owner['user']}/credentials/OS-EC2", token=cred["token"],
                 json={"tenant_id": other})
    assert r.status_code == 201, r.text
    r = ec2_login(api, r.json()["credential"]["access"], r.json()["credential"]["secret"])
    assert assert_keystone_error(r, 401)["message"] == GENERIC_401


# ------------------------------------------------------------------ item 9: access rules
BAD_RULES = [
    ("service", None, "None is not of type 'string'"),
    ("service", ["compute"], "['compute'] is not of type 'string'"),
    ("service", {"type": "compute"}, "{'type': 'compute'} is not of type 'string'"),
    ("method", None, "None is not of type 'string'"),
    ("method", ["GET"], "['GET'] is not of type 'string'"),
    ("method", {"GET": 1}, "{'GET': 1} is not of type 'string'"),
    ("method", "get", "'get' does not match '^(POST|GET|HEAD|PATCH|PUT|DELETE)$'"),
    ("path", None, "None is not of type 'string'"),
    ("path", ["/v2.1/servers"], "['/v2.1/servers'] is not of type 'string'"),
    ("path", {"/": 1}, "{'/': 1} is not of type 'string'"),
    ("id", None, "None is not of type 'string'"),
    ("id", [], "[] is not of type 'string'"),
]


@pytest.mark.parametrize("field,value,why", BAD_RULES,
                         ids=[f"{f}-{type(v).__name__}" + ("-lower" if v == "get" else "")
                              for f, v, _ in BAD_RULES])
def test_an_access_rule_of_the_wrong_shape_is_400(api, field, value, why):
    owner = _member(api)
    rule = {"service": "compute", "method": "GET", "path": "/v2.1/servers", field: value}
    r = api.post(f"{V3}/users/{owner['user']}/application_credentials", token=owner["token"],
                 json={"application_credential": {"name": "shape", "access_rules": [
                     {"service": "network", "method": "GET", "path": "/v2.0/networks"},
                     rule]}})
    err = assert_keystone_error(r, 400)
    assert err["title"] == "Bad Request"
    assert err["message"] == f"Invalid input for field 'access_rules/1/{field}': {why}"
    rules = api.get(f"{V3}/users/{owner['user']}/access_rules", token=owner["token"]).json()
    assert rules["access_rules"] == []  # nothing of the refused credential was stored
