"""Credentials that delegate, hardened: an EC2 credential is bound to the trust or the
application credential of the token that makes it, never to one its blob names, and its
logins are held to what it is bound to; application credential access rules of the wrong
shape are a 400, never a database error. On SQLite, PostgreSQL and MariaDB (the in-process
app per backend); the same stories through the `openstack` CLI are in
tests/clients/test_hardening_credentials_clients.py."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

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
