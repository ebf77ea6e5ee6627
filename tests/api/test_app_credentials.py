"""Application credentials over the in-process app: the secret shown once, roles a
subset of the creator's, expiry, `unrestricted`, and the application_credential login."""

from __future__ import annotations

import datetime as dt
import uuid

from tests.api.test_identity import assert_keystone_error

V3 = "/identity/v3"


def _member(api) -> dict:
    """A fresh user with member on a fresh project, and its project-scoped token."""
    suffix = uuid.uuid4().hex[:6]
    project = api.post(f"{V3}/projects", json={"project": {"name": f"ap-{suffix}"}}).json()
    user = api.post(f"{V3}/users", json={"user": {"name": f"au-{suffix}",
                                                  "password": "pw"}}).json()["user"]
    roles = {r["name"]: r["id"] for r in api.get(f"{V3}/roles").json()["roles"]}
    pid = project["project"]["id"]
    api.put(f"{V3}/projects/{pid}/users/{user['id']}/roles/{roles['member']}")
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": user["id"], "password": "pw"}}}, "scope": {"project": {"id": pid}}}}
    r = api.post(f"{V3}/auth/tokens", user=None, json=body)
    assert r.status_code == 201, r.text
    return {"user": user, "project_id": pid, "token": r.headers["X-Subject-Token"],
            "roles": roles, "path": f"{V3}/users/{user['id']}/application_credentials"}


def _login(api, cred: dict, **extra):
    ref = {"id": cred["id"], "secret": cred["secret"], **extra}
    return api.post(f"{V3}/auth/tokens", user=None, json={"auth": {"identity": {
        "methods": ["application_credential"], "application_credential": ref}}})


def test_create_show_list_delete(api):
    m = _member(api)
    r = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "ci", "description": "pipeline"}})
    assert r.status_code == 201, r.text
    cred = r.json()["application_credential"]
    assert cred["secret"] and cred["project_id"] == m["project_id"]
    assert cred["unrestricted"] is False and cred["expires_at"] is None
    assert {x["name"] for x in cred["roles"]} == {"member", "reader"}
    # an empty list (what `openstack application credential create` sends) is the default
    r = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "cli", "roles": []}})
    assert {x["name"] for x in r.json()["application_credential"]["roles"]} == {"member",
                                                                               "reader"}
    shown = api.get(f"{m['path']}/{cred['id']}", token=m["token"]).json()
    assert "secret" not in shown["application_credential"]
    listed = api.get(f"{m['path']}?name=ci", token=m["token"]).json()
    assert [c["id"] for c in listed["application_credentials"]] == [cred["id"]]
    assert_keystone_error(api.post(m["path"], token=m["token"], json={
        "application_credential": {"name": "ci"}}), 409)
    # another member may not see it; an admin may
    assert_keystone_error(api.get(m["path"], token=api.token("demo")), 403)
    assert api.get(m["path"]).status_code == 200
    # nor create one for someone else, even an admin
    assert_keystone_error(api.post(m["path"], json={"application_credential": {"name": "x"}}),
                          403)
    assert api.delete(f"{m['path']}/{cred['id']}", token=m["token"]).status_code == 204
    assert_keystone_error(api.get(f"{m['path']}/{cred['id']}", token=m["token"]), 404)
    assert _login(api, cred).status_code == 401


def test_login_with_id_or_name_and_token_body(api):
    m = _member(api)
    cred = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "tf", "secret": "s3cret", "roles": [{"name": "reader"}]}}).json()[
        "application_credential"]
    assert cred["secret"] == "s3cret"
    r = _login(api, cred)
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    assert token["methods"] == ["application_credential"]
    assert token["project"]["id"] == m["project_id"]
    assert [x["name"] for x in token["roles"]] == ["reader"]
    assert token["application_credential"] == {"id": cred["id"], "name": "tf",
                                               "restricted": True}
    assert any(s["type"] == "compute" for s in token["catalog"])
    by_name = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {"identity": {
        "methods": ["application_credential"], "application_credential": {
            "name": "tf", "secret": "s3cret", "user": {"id": m["user"]["id"]}}}}})
    assert by_name.status_code == 201, by_name.text
    assert _login(api, {**cred, "secret": "wrong"}).status_code == 401
    scoped = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {
        "identity": {"methods": ["application_credential"],
                     "application_credential": {"id": cred["id"], "secret": "s3cret"}},
        "scope": {"project": {"id": m["project_id"]}}}})
    assert scoped.status_code == 401
    # a reader-only token cannot reach member-only APIs
    ac_token = r.headers["X-Subject-Token"]
    created = api.post("/networking/v2.0/networks", token=ac_token,
                       json={"network": {"name": "nope"}})
    assert created.status_code == 403


def test_roles_must_be_held_and_expiry(api):
    m = _member(api)
    r = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "x", "roles": [{"name": "admin"}]}})
    assert_keystone_error(r, 404)
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    r = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "x", "expires_at": past}})
    assert_keystone_error(r, 400)
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).replace(tzinfo=None)
    r = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "x", "expires_at": soon.isoformat() + "Z"}})
    assert r.status_code == 201, r.text
    cred = r.json()["application_credential"]
    assert cred["expires_at"] == soon.strftime("%Y-%m-%dT%H:%M:%S.%f")
    token = _login(api, cred).json()["token"]
    expires = dt.datetime.strptime(token["expires_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert expires <= soon
    assert_keystone_error(api.post(m["path"], token=m["token"], json={
        "application_credential": {"name": "y", "bogus": 1}}), 400)


def test_restricted_cannot_delegate_unrestricted_can(api):
    m = _member(api)
    restricted = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "r"}}).json()["application_credential"]
    free = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "u", "unrestricted": True}}).json()["application_credential"]
    r_token = _login(api, restricted).headers["X-Subject-Token"]
    u_token = _login(api, free).headers["X-Subject-Token"]
    r = api.post(m["path"], token=r_token, json={"application_credential": {"name": "n1"}})
    assert_keystone_error(r, 403)
    r = api.post(m["path"], token=u_token, json={"application_credential": {"name": "n2"}})
    assert r.status_code == 201, r.text
    # rescoping an application credential token is refused
    r = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {
        "identity": {"methods": ["token"], "token": {"id": r_token}},
        "scope": {"project": {"id": m["project_id"]}}}})
    assert r.status_code == 401


def test_losing_the_role_or_the_user_invalidates(api):
    m = _member(api)
    cred = api.post(m["path"], token=m["token"], json={"application_credential": {
        "name": "gone"}}).json()["application_credential"]
    token = _login(api, cred).headers["X-Subject-Token"]
    grant = f"{V3}/projects/{m['project_id']}/users/{m['user']['id']}/roles/{m['roles']['member']}"
    assert api.delete(grant).status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token).status_code == 401
    assert _login(api, cred).status_code == 401
    m2 = _member(api)
    cred2 = api.post(m2["path"], token=m2["token"], json={"application_credential": {
        "name": "u"}}).json()["application_credential"]
    token2 = _login(api, cred2).headers["X-Subject-Token"]
    assert api.delete(f"{V3}/users/{m2['user']['id']}").status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token2).status_code == 401
    assert _login(api, cred2).status_code == 401
