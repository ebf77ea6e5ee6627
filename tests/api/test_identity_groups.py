"""Keystone groups over the in-process app: CRUD, membership, group grants in tokens and
in role assignments, and token revocation when membership or a group grant goes away."""

from __future__ import annotations

import uuid

from tests.api.test_identity import assert_keystone_error

V3 = "/identity/v3"


def _login(api, user: str, password: str, project: str | None):
    body: dict = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}}}}
    if project:
        body["auth"]["scope"] = {"project": {"name": project, "domain": {"id": "default"}}}
    return api.post(f"{V3}/auth/tokens", user=None, json=body)


def _setup(api) -> dict:
    suffix = uuid.uuid4().hex[:6]
    project = api.post(f"{V3}/projects", json={"project": {"name": f"gp-{suffix}"}}).json()
    user = api.post(f"{V3}/users", json={"user": {"name": f"gu-{suffix}",
                                                  "password": "pw"}}).json()["user"]
    group = api.post(f"{V3}/groups", json={"group": {"name": f"gg-{suffix}",
                                                     "description": "ci"}})
    assert group.status_code == 201, group.text
    roles = {r["name"]: r["id"] for r in api.get(f"{V3}/roles").json()["roles"]}
    return {"project": project["project"], "user": user, "group": group.json()["group"],
            "roles": roles}


def test_group_crud_and_errors(api):
    env = _setup(api)
    group = env["group"]
    assert group["domain_id"] == "default" and group["description"] == "ci"
    assert group["links"]["self"].endswith(f"/v3/groups/{group['id']}")
    listed = api.get(f"{V3}/groups?name={group['name']}").json()["groups"]
    assert [g["id"] for g in listed] == [group["id"]]
    dup = api.post(f"{V3}/groups", json={"group": {"name": group["name"]}})
    assert_keystone_error(dup, 409)
    assert_keystone_error(api.post(f"{V3}/groups", json={"group": {"name": 3}}), 400)
    assert_keystone_error(api.get(f"{V3}/groups/nope"), 404)
    r = api.patch(f"{V3}/groups/{group['id']}", json={"group": {"description": "new"}})
    assert r.status_code == 200 and r.json()["group"]["description"] == "new"
    # a member may not manage groups
    assert_keystone_error(api.get(f"{V3}/groups", user="demo", token=api.token("demo")), 403)
    assert api.delete(f"{V3}/groups/{group['id']}").status_code == 204
    assert_keystone_error(api.get(f"{V3}/groups/{group['id']}"), 404)


def test_membership(api):
    env = _setup(api)
    gid, uid = env["group"]["id"], env["user"]["id"]
    path = f"{V3}/groups/{gid}/users/{uid}"
    assert_keystone_error(api.get(path), 404)
    assert api.put(path).status_code == 204
    assert api.put(path).status_code == 204  # idempotent
    assert api.request("HEAD", path).status_code == 204
    assert [u["id"] for u in api.get(f"{V3}/groups/{gid}/users").json()["users"]] == [uid]
    assert [g["id"] for g in api.get(f"{V3}/users/{uid}/groups").json()["groups"]] == [gid]
    assert_keystone_error(api.put(f"{V3}/groups/{gid}/users/nope"), 404)
    assert api.delete(path).status_code == 204
    assert_keystone_error(api.delete(path), 404)
    assert api.get(f"{V3}/users/{uid}/groups").json()["groups"] == []


def test_group_grant_gives_token_roles_and_removal_revokes(api):
    env = _setup(api)
    gid, uid, pid = env["group"]["id"], env["user"]["id"], env["project"]["id"]
    member = env["roles"]["member"]
    # no role yet: no project-scoped token
    assert _login(api, env["user"]["name"], "pw", env["project"]["name"]).status_code == 401
    grant = f"{V3}/projects/{pid}/groups/{gid}/roles/{member}"
    assert_keystone_error(api.get(grant), 404)
    assert api.put(grant).status_code == 204
    assert api.put(f"{V3}/groups/{gid}/users/{uid}").status_code == 204
    assert api.request("HEAD", grant).status_code == 204
    listed = api.get(f"{V3}/projects/{pid}/groups/{gid}/roles").json()["roles"]
    assert [r["name"] for r in listed] == ["member"]
    r = _login(api, env["user"]["name"], "pw", env["project"]["name"])
    assert r.status_code == 201, r.text
    assert {x["name"] for x in r.json()["token"]["roles"]} == {"member", "reader"}
    token = r.headers["X-Subject-Token"]
    # the project is among the user's projects
    mine = api.get(f"{V3}/auth/projects", token=token).json()["projects"]
    assert pid in [p["id"] for p in mine]
    # removing the user from the group revokes its tokens, and new logins fail
    assert api.delete(f"{V3}/groups/{gid}/users/{uid}").status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token).status_code == 401
    assert _login(api, env["user"]["name"], "pw", env["project"]["name"]).status_code == 401
    # a revoked group grant revokes the members' tokens too
    assert api.put(f"{V3}/groups/{gid}/users/{uid}").status_code == 204
    token = _login(api, env["user"]["name"], "pw", env["project"]["name"]).headers[
        "X-Subject-Token"]
    assert api.delete(grant).status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token).status_code == 401
    assert_keystone_error(api.delete(grant), 404)


def test_role_assignments_group_and_effective(api):
    env = _setup(api)
    gid, uid, pid = env["group"]["id"], env["user"]["id"], env["project"]["id"]
    member = env["roles"]["member"]
    api.put(f"{V3}/projects/{pid}/groups/{gid}/roles/{member}")
    api.put(f"{V3}/groups/{gid}/users/{uid}")
    rows = api.get(f"{V3}/role_assignments?group.id={gid}").json()["role_assignments"]
    assert len(rows) == 1
    assert rows[0]["group"] == {"id": gid} and rows[0]["scope"] == {"project": {"id": pid}}
    assert rows[0]["links"]["assignment"].endswith(f"/projects/{pid}/groups/{gid}/roles/{member}")
    direct = api.get(f"{V3}/role_assignments?user.id={uid}").json()["role_assignments"]
    assert direct == []
    eff = api.get(f"{V3}/role_assignments?user.id={uid}&effective").json()["role_assignments"]
    names = {(r["role"]["id"], r["user"]["id"]) for r in eff}
    assert names == {(member, uid), (env["roles"]["reader"], uid)}
    via = next(r for r in eff if r["role"]["id"] == member)
    assert via["links"]["membership"].endswith(f"/groups/{gid}/users/{uid}")
    by_project = api.get(f"{V3}/role_assignments?scope.project.id={pid}&effective"
                         "&include_names").json()["role_assignments"]
    assert {r["user"]["name"] for r in by_project} == {env["user"]["name"]}
    r = api.get(f"{V3}/role_assignments?group.id={gid}&effective")
    assert_keystone_error(r, 400)


def test_deleting_a_group_revokes_members_tokens(api):
    env = _setup(api)
    gid, uid, pid = env["group"]["id"], env["user"]["id"], env["project"]["id"]
    api.put(f"{V3}/projects/{pid}/groups/{gid}/roles/{env['roles']['member']}")
    api.put(f"{V3}/groups/{gid}/users/{uid}")
    token = _login(api, env["user"]["name"], "pw", env["project"]["name"]).headers[
        "X-Subject-Token"]
    assert api.delete(f"{V3}/groups/{gid}").status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token).status_code == 401
    rows = api.get(f"{V3}/role_assignments?scope.project.id={pid}").json()["role_assignments"]
    assert rows == []


def test_deleting_a_role_revokes_tokens_of_group_members(api):
    env = _setup(api)
    gid, uid, pid = env["group"]["id"], env["user"]["id"], env["project"]["id"]
    role = api.post(f"{V3}/roles", json={"role": {"name": f"r-{uuid.uuid4().hex[:6]}"}}
                    ).json()["role"]
    api.put(f"{V3}/projects/{pid}/groups/{gid}/roles/{role['id']}")
    api.put(f"{V3}/groups/{gid}/users/{uid}")
    r = _login(api, env["user"]["name"], "pw", env["project"]["name"])
    assert [x["name"] for x in r.json()["token"]["roles"]] == [role["name"]]
    token = r.headers["X-Subject-Token"]
    assert api.delete(f"{V3}/roles/{role['id']}").status_code == 204
    assert api.get(f"{V3}/auth/projects", token=token).status_code == 401


def test_domain_grant_through_a_group(api):
    env = _setup(api)
    gid, uid = env["group"]["id"], env["user"]["id"]
    api.put(f"{V3}/domains/default/groups/{gid}/roles/{env['roles']['member']}")
    api.put(f"{V3}/groups/{gid}/users/{uid}")
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": uid, "password": "pw"}}}, "scope": {"domain": {"id": "default"}}}}
    r = api.post(f"{V3}/auth/tokens", user=None, json=body)
    assert r.status_code == 201, r.text
    assert r.json()["token"]["domain"]["id"] == "default"
    token = r.headers["X-Subject-Token"]
    domains = api.get(f"{V3}/auth/domains", token=token).json()["domains"]
    assert [d["id"] for d in domains] == ["default"]
    api.delete(f"{V3}/domains/default/groups/{gid}/roles/{env['roles']['member']}")
