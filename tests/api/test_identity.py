"""Identity v3 over the in-process app: bodies, statuses and Keystone's errors."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ADMIN_PASSWORD

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def password_auth(user: str, password: str, project: str | None = "admin") -> dict:
    body: dict = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"name": "Default"}, "password": password}}}}}
    if project:
        body["auth"]["scope"] = {"project": {"name": project, "domain": {"name": "Default"}}}
    return body


def assert_keystone_error(r, status: int) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    err = r.json()["error"]
    assert err["code"] == status and err["title"] and err["message"]
    return err


def test_discovery_needs_no_token(api):
    r = api.get("/identity", user=None)
    assert r.status_code == 300
    v = r.json()["versions"]["values"][0]
    assert v["id"] == "v3.14" and v["status"] == "stable"
    assert v["links"][0]["href"].endswith("/identity/v3/")
    assert r.headers["location"].endswith("/identity/v3/")
    r = api.get("/identity/v3", user=None)
    assert r.status_code == 200 and r.json()["version"]["id"] == "v3.14"
    assert r.headers["x-openstack-request-id"].startswith("req-")


def test_token_issue_body(api):
    r = api.post("/identity/v3/auth/tokens", user=None, json=password_auth("admin", ADMIN_PASSWORD))
    assert r.status_code == 201
    token = r.json()["token"]
    assert r.headers["X-Subject-Token"]
    assert TIME_RE.match(token["expires_at"]) and TIME_RE.match(token["issued_at"])
    assert token["project"]["name"] == "admin"
    assert token["project"]["domain"] == {"id": "default", "name": "Default"}
    assert {r["name"] for r in token["roles"]} == {"admin", "manager", "member", "reader"}
    identity = [s for s in token["catalog"] if s["type"] == "identity"][0]
    assert {e["interface"] for e in identity["endpoints"]} == {"public", "internal", "admin"}
    assert all(e["region"] == e["region_id"] == "RegionOne" for e in identity["endpoints"])


def test_unscoped_and_nocatalog(api):
    r = api.post("/identity/v3/auth/tokens", user=None,
                 json=password_auth("admin", ADMIN_PASSWORD, project=None))
    assert r.status_code == 201
    assert "catalog" not in r.json()["token"] and "roles" not in r.json()["token"]
    r = api.post("/identity/v3/auth/tokens?nocatalog", user=None,
                 json=password_auth("demo", "demo-secret", project="demo"))
    assert r.status_code == 201 and "catalog" not in r.json()["token"]


@pytest.mark.parametrize("body,status", [
    (b"{not json", 400),
    (b"[]", 400),
    (b'{"auth": 5}', 400),
    (b'{"auth": {"identity": {"methods": "password"}}}', 400),
    (b'{"auth": {"identity": {"methods": ["password"], "password": {"user": {"password": "x"}}}}}',
     400),
    (b'{"auth": {"identity": {"methods": ["password"], "password": {"user": '
     b'{"name": "admin", "domain": {"id": "default"}, "password": 5}}}}}', 400),
    (b'{"auth": {"identity": {"methods": ["password"], "password": {"user": '
     b'{"name": "admin", "domain": {"id": "default"}, "password": "wrong"}}}}}', 401),
    (b'{"auth": {"identity": {"methods": ["password"], "password": {"user": '
     b'{"name": "nobody", "domain": {"id": "default"}, "password": "x"}}}}}', 401),
    (b'{"auth": {"identity": {"methods": ["totp"], "totp": {}}}}', 401),
])
def test_token_issue_bad_input(api, body, status):
    r = api.request("POST", "/identity/v3/auth/tokens", user=None, content=body,
                    headers={"content-type": "application/json"})
    err = assert_keystone_error(r, status)
    if status == 401:
        assert "www-authenticate" in r.headers or err["message"]


def test_unknown_project_and_no_role_are_401(api):
    r = api.post("/identity/v3/auth/tokens", user=None,
                 json=password_auth("admin", ADMIN_PASSWORD, project="nope"))
    assert_keystone_error(r, 401)
    r = api.post("/identity/v3/auth/tokens", user=None,
                 json=password_auth("demo", "demo-secret", project="admin"))
    assert_keystone_error(r, 401)


def test_missing_forged_and_revoked_tokens(api):
    r = api.get("/identity/v3/projects", user=None)
    assert_keystone_error(r, 401)
    assert r.headers["www-authenticate"].startswith("Keystone uri=")
    assert_keystone_error(api.get("/identity/v3/projects", token="gAAAAAforged"), 401)
    token = api.post("/identity/v3/auth/tokens", user=None,
                     json=password_auth("admin", ADMIN_PASSWORD)).headers["X-Subject-Token"]
    tampered = token[:-5] + ("A" if token[-5] != "A" else "B") + token[-4:]
    assert_keystone_error(api.get("/identity/v3/projects", token=tampered), 401)
    check = api.request("HEAD", "/identity/v3/auth/tokens", headers={"X-Subject-Token": token})
    assert check.status_code == 200
    r = api.delete("/identity/v3/auth/tokens", headers={"X-Subject-Token": token})
    assert r.status_code == 204
    assert_keystone_error(api.get("/identity/v3/projects", token=token), 401)
    r = api.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": token})
    assert_keystone_error(r, 404)


def test_expired_token_is_401(api, monkeypatch):
    import datetime as dt

    from stackling.identity import tokens

    with api.runtime.db.transaction() as db:
        keys = api.runtime.state["identity.keys"]
        from sqlalchemy import select

        from stackling.identity.models import User

        admin = db.scalars(select(User).where(User.name == "admin")).one()
        past = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
        data = tokens.TokenData(user_id=admin.id, methods=["password"], issued_at=past,
                                expires_at=past + dt.timedelta(hours=1), audit_ids=["x"],
                                roles=["admin"], project_id="p")
        expired = tokens.issue(db, keys, data)
    assert_keystone_error(api.get("/identity/v3/projects", token=expired), 401)


def test_project_crud_and_errors(api):
    r = api.post("/identity/v3/projects", json={"project": {"name": "p1", "description": "d"}})
    assert r.status_code == 201, r.text
    project = r.json()["project"]
    assert project["domain_id"] == "default" and project["parent_id"] == "default"
    assert project["is_domain"] is False and project["links"]["self"].endswith(project["id"])
    dup = api.post("/identity/v3/projects", json={"project": {"name": "p1"}})
    assert "Duplicate entry" in assert_keystone_error(dup, 409)["message"]
    assert_keystone_error(api.post("/identity/v3/projects", json={"project": {"name": 5}}), 400)
    assert_keystone_error(api.post("/identity/v3/projects", json={"project": {}}), 400)
    assert_keystone_error(api.post("/identity/v3/projects",
                                   json={"project": {"name": "x", "enabled": "yes"}}), 400)
    assert_keystone_error(api.post("/identity/v3/projects", json={"nope": {}}), 400)
    assert_keystone_error(api.get("/identity/v3/projects/missing"), 404)
    listed = api.get("/identity/v3/projects?name=p1").json()
    assert [p["id"] for p in listed["projects"]] == [project["id"]]
    assert listed["links"]["next"] is None
    r = api.patch(f"/identity/v3/projects/{project['id']}",
                  json={"project": {"description": "new"}})
    assert r.status_code == 200 and r.json()["project"]["description"] == "new"
    assert api.delete(f"/identity/v3/projects/{project['id']}").status_code == 204
    assert_keystone_error(api.get(f"/identity/v3/projects/{project['id']}"), 404)


def test_failed_request_changes_nothing(api):
    before = api.get("/identity/v3/users").json()["users"]
    r = api.post("/identity/v3/users", json={"user": {"name": "x", "enabled": "bad"}})
    assert_keystone_error(r, 400)
    r = api.post("/identity/v3/users", json={"user": {"name": "y", "default_project_id": "nope"}})
    assert_keystone_error(r, 404)
    assert api.get("/identity/v3/users").json()["users"] == before


def test_grants_idempotent_and_member_forbidden(api):
    project = api.post("/identity/v3/projects", json={"project": {"name": "gp"}}).json()["project"]
    user = api.post("/identity/v3/users", json={"user": {"name": "gu", "password": "pw",
                                                         "email": "gu@example.com"}}).json()["user"]
    assert user["email"] == "gu@example.com" and "password" not in user
    roles = {r["name"]: r["id"] for r in api.get("/identity/v3/roles").json()["roles"]}
    assert {"admin", "member", "reader"} <= set(roles)
    path = f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{roles['member']}"
    assert api.put(path).status_code == 204
    assert api.put(path).status_code == 204
    assert api.request("HEAD", path).status_code == 204
    assignments = api.get(f"/identity/v3/role_assignments?user.id={user['id']}"
                          "&include_names").json()["role_assignments"]
    assert assignments == [{
        "role": {"id": roles["member"], "name": "member"},
        "user": {"id": user["id"], "name": "gu", "domain": {"id": "default", "name": "Default"}},
        "scope": {"project": {"id": project["id"], "name": "gp",
                              "domain": {"id": "default", "name": "Default"}}},
        "links": {"assignment": assignments[0]["links"]["assignment"]}}]
    effective = api.get(f"/identity/v3/role_assignments?user.id={user['id']}&effective"
                        ).json()["role_assignments"]
    assert {a["role"]["id"] for a in effective} == {roles["member"], roles["reader"]}
    token = api.token("gu", "gp", password="pw")
    r = api.post("/identity/v3/projects", token=token, json={"project": {"name": "nope"}})
    assert "identity:create_project" in assert_keystone_error(r, 403)["message"]
    assert api.get(f"/identity/v3/projects/{project['id']}", token=token).status_code == 200
    assert api.get(f"/identity/v3/users/{user['id']}/projects", token=token).json()[
        "projects"][0]["id"] == project["id"]
    # Removing the role revokes the tokens that carried it.
    assert api.delete(path).status_code == 204
    assert_keystone_error(api.get(f"/identity/v3/projects/{project['id']}", token=token), 401)


def test_method_not_allowed_and_unknown_path(api):
    r = api.put("/identity/v3/projects")
    assert_keystone_error(r, 405)
    assert "GET" in r.headers["allow"]
    assert_keystone_error(api.get("/identity/v3/nothing-here"), 404)


def test_catalog_admin_reads(api):
    services = api.get("/identity/v3/services").json()["services"]
    identity = [s for s in services if s["type"] == "identity"][0]
    endpoints = api.get(f"/identity/v3/endpoints?service_id={identity['id']}").json()["endpoints"]
    assert sorted(e["interface"] for e in endpoints) == ["admin", "internal", "public"]
    assert endpoints[0]["url"] == "http://stackling.test/identity"
    assert api.get("/identity/v3/regions").json()["regions"][0]["id"] == "RegionOne"
    assert api.get("/identity/v3/services", user="demo").status_code == 403
