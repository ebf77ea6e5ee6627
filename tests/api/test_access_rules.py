"""Application credential access rules are enforced on every service (issue 19, item 7).

A credential limited to one route of one service makes tokens that may call that route
and nothing else: every other route, of that service or another, is keystonemiddleware's
401. Paths are below the service's prefix; `*` is one segment, `**` any run of them.
"""

from __future__ import annotations

import uuid

import pytest

from stackling.common.access_rules import path_matches
from tests.api.test_identity import assert_keystone_error

V3 = "/identity/v3"


def _cred_token(api, rules: list[dict] | None) -> tuple[str, dict]:
    """A token from a new application credential of admin's holding `rules`."""
    user_id = api.get(f"{V3}/auth/tokens", headers={
        "X-Subject-Token": api.token("admin")}).json()["token"]["user"]["id"]
    body = {"name": f"ar-{uuid.uuid4().hex[:8]}"}
    if rules is not None:
        body["access_rules"] = rules
    r = api.post(f"{V3}/users/{user_id}/application_credentials",
                 json={"application_credential": body})
    assert r.status_code == 201, r.text
    cred = r.json()["application_credential"]
    r = api.post(f"{V3}/auth/tokens", user=None, json={"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": cred["id"], "secret": cred["secret"]}}}})
    assert r.status_code == 201, r.text
    return r.headers["X-Subject-Token"], r.json()["token"]


def _project_id(api) -> str:
    return api.get(f"{V3}/auth/tokens", headers={"X-Subject-Token": api.token("admin")}
                   ).json()["token"]["project"]["id"]


# (service type, method, rule path, the allowed request, other requests of that service)
ROUTES = [
    ("identity", "GET", "/v3/auth/catalog", ("GET", "/identity/v3/auth/catalog"),
     [("GET", "/identity/v3/auth/projects"), ("POST", "/identity/v3/projects")]),
    ("network", "GET", "/v2.0/networks", ("GET", "/networking/v2.0/networks"),
     [("POST", "/networking/v2.0/networks"), ("GET", "/networking/v2.0/subnets")]),
    ("compute", "GET", "/v2.1/flavors/*", ("GET", "/compute/v2.1/flavors/1"),
     [("GET", "/compute/v2.1/flavors"), ("GET", "/compute/v2.1/servers")]),
    ("image", "GET", "/v2/images", ("GET", "/image/v2/images"),
     [("GET", "/image/v2/schemas/image"), ("POST", "/image/v2/images")]),
    ("placement", "GET", "/resource_providers", ("GET", "/placement/resource_providers"),
     [("GET", "/placement/traits"), ("POST", "/placement/resource_providers")]),
    ("orchestration", "GET", "/v1/{project_id}/stacks",
     ("GET", "/orchestration/v1/{project}/stacks"),
     [("GET", "/orchestration/v1/{project}/build_info"),
      ("POST", "/orchestration/v1/{project}/stacks")]),
]


@pytest.mark.parametrize("service,method,path,allowed,others", ROUTES,
                         ids=[r[0] for r in ROUTES])
def test_a_credential_limited_to_one_route(api, service, method, path, allowed, others):
    token, body = _cred_token(api, [{"service": service, "method": method, "path": path}])
    rules = body["application_credential"]["access_rules"]
    assert [(r["service"], r["method"], r["path"]) for r in rules] == [(service, method, path)]
    project = _project_id(api)
    verb, url = allowed
    r = api.request(verb, url.format(project=project), token=token)
    assert r.status_code == 200, r.text
    for verb, url in others:
        r = api.request(verb, url.format(project=project), token=token, json={})
        err = assert_keystone_error(r, 401)
        assert err["title"] == "Unauthorized"
        assert r.headers["WWW-Authenticate"].startswith("Keystone uri=")
    # every other service refuses it
    for other, _, _, (verb, url), _ in ROUTES:
        if other != service:
            assert_keystone_error(api.request(verb, url.format(project=project), token=token),
                                  401)
    # the token itself may always be validated
    r = api.get(f"{V3}/auth/tokens", token=token, headers={"X-Subject-Token": token})
    assert r.status_code == 200, r.text


def test_the_reported_case_creates_nothing(api):
    """A credential limited to `identity GET /v3/auth/catalog` created a network (201)."""
    token, _ = _cred_token(api, [{"service": "identity", "method": "GET",
                                  "path": "/v3/auth/catalog"}])
    assert api.get(f"{V3}/auth/catalog", token=token).status_code == 200
    r = api.post("/networking/v2.0/networks", token=token,
                 json={"network": {"name": "should-not-exist"}})
    assert_keystone_error(r, 401)
    names = [n["name"] for n in api.get("/networking/v2.0/networks").json()["networks"]]
    assert "should-not-exist" not in names
    # nor may it reach the admin audit
    assert api.get("/audit", token=token).status_code == 401


def test_wildcards_and_spellings(api):
    token, _ = _cred_token(api, [
        {"service": "network", "method": "GET", "path": "/v2.0/security-groups"},
        {"service": "network", "method": "GET", "path": "/v2.0/networks/**"},
        {"service": "compute", "method": "GET", "path": "/compute/v2.1/flavors"}])
    # the hyphenated spelling a client sends (the router's own rewrite does not matter)
    assert api.get("/networking/v2.0/security-groups", token=token).status_code == 200
    assert_keystone_error(api.get("/networking/v2.0/security_groups", token=token), 401)
    net = api.post("/networking/v2.0/networks", json={"network": {"name": "ar"}}).json()
    net_id = net["network"]["id"]
    assert api.get(f"/networking/v2.0/networks/{net_id}", token=token).status_code == 200
    assert api.get(f"/networking/v2.0/networks/{net_id}/tags", token=token).status_code == 200
    assert_keystone_error(api.get("/networking/v2.0/networks", token=token), 401)
    # a rule written with the service's prefix matches the full path
    assert api.get("/compute/v2.1/flavors", token=token).status_code == 200


def test_unrestricted_and_invalid_rules(api):
    token, body = _cred_token(api, None)
    assert "access_rules" not in body["application_credential"]
    for url in ("/networking/v2.0/networks", "/compute/v2.1/flavors", "/image/v2/images"):
        assert api.get(url, token=token).status_code == 200
    user_id = body["user"]["id"]
    for bad in ({"service": "network", "method": "FETCH", "path": "/v2.0/networks"},
                {"service": "network", "method": "GET", "path": "v2.0/networks"},
                {"service": "network", "method": "GET", "path": "/x", "extra": 1},
                {"service": "network", "method": "GET"}, "GET /v2.0/networks"):
        r = api.post(f"{V3}/users/{user_id}/application_credentials", json={
            "application_credential": {"name": f"bad-{uuid.uuid4().hex[:6]}",
                                       "access_rules": [bad]}})
        assert_keystone_error(r, 400)
    r = api.post(f"{V3}/users/{user_id}/application_credentials", json={
        "application_credential": {"name": "unknown-rule", "access_rules": [
            {"id": uuid.uuid4().hex}]}})
    assert_keystone_error(r, 404)


def test_a_rule_given_by_id_is_the_users_rule(api):
    token, body = _cred_token(api, [{"service": "image", "method": "GET",
                                     "path": "/v2/images"}])
    rule_id = body["application_credential"]["access_rules"][0]["id"]
    token2, body2 = _cred_token(api, [{"id": rule_id}])
    assert body2["application_credential"]["access_rules"] == [
        {"id": rule_id, "service": "image", "method": "GET", "path": "/v2/images"}]
    assert api.get("/image/v2/images", token=token2).status_code == 200
    assert_keystone_error(api.get("/compute/v2.1/flavors", token=token2), 401)


@pytest.mark.parametrize("path,template,expected", [
    ("/v2.1/servers/abc/ips", "/v2.1/servers/{server_id}/ips", True),
    ("/v2.1/servers/abc/ips", "/v2.1/servers/*/ips", True),
    ("/v2.1/servers/a/b/ips", "/v2.1/servers/*/ips", False),
    ("/v2.1/servers/a/b/ips", "/v2.1/servers/**/ips", True),
    ("/v2.1/servers", "/v2.1/servers/**", False),
    ("/v2.1/servers/", "/v2.1/servers/*", False),
    ("/v2.1/servers", "/v2.1/servers/*", False),
    ("/v2x1/servers", "/v2.1/servers", False),
    ("/anything/at/all", "/**", True),
    ("/" + "a" * 3000 + "b", "/" + "**a" * 100 + "c", False),  # no exponential backtracking
])
def test_path_templates(path, template, expected):
    assert path_matches(path, template) is expected
