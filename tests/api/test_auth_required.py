"""Every API but version discovery needs a valid token, in every service."""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"\{[^}]+\}")


def _routes(api):
    for service in api.runtime.services.values():
        for route in service.routes:
            path = service.prefix + PLACEHOLDER.sub("x", route.path.replace("{path:path}", "x"))
            for method in route.methods:
                yield service, route, method, path


def test_every_private_route_is_401_without_a_token(api):
    checked = 0
    for _service, route, method, path in _routes(api):
        if route.is_public(method):
            continue
        r = api.request(method, path, user=None, json={})
        assert r.status_code == 401, (method, path, r.status_code, r.text[:200])
        if method != "HEAD":
            assert r.json()["error"]["code"] == 401
        assert r.headers["www-authenticate"].startswith("Keystone uri=")
        forged = api.request(method, path, token="gAAAAAforged", json={})
        assert forged.status_code == 401, (method, path, forged.status_code)
        checked += 1
    assert checked > 100  # every service's table was walked


# Routes that check their own credentials: a resource signal takes a Keystone token or the
# secret of the wait condition handle it signals (orchestration/signals.py).
SELF_AUTHENTICATED = {("POST", "/orchestration/v1/x/stacks/x/x/resources/x/signal")}


def test_public_routes_are_only_discovery_and_login(api):
    public = sorted({(m, p) for s, r, m, p in _routes(api) if r.is_public(m)})
    for method, path in public:
        if (method, path) in SELF_AUTHENTICATED:
            continue
        # logins: a password/token/credential one, and an EC2-signed request (Keystone's)
        assert method in ("GET", "HEAD") or path in (
            "/identity/v3/auth/tokens", "/identity/v3/ec2tokens", "/identity/v3/s3tokens"), (
                method, path)
    assert ("POST", "/identity/v3/auth/tokens") in public


def test_self_authenticated_routes_are_401_without_a_credential(api):
    for method, path in SELF_AUTHENTICATED:
        for token in (None, "gAAAAAforged"):
            kw = {"user": None} if token is None else {"token": token}
            r = api.request(method, path, json={}, **kw)
            assert r.status_code == 401, (method, path, token, r.status_code, r.text[:200])
