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


def test_public_routes_are_only_discovery_and_login(api):
    public = sorted({(m, p) for s, r, m, p in _routes(api) if r.is_public(m)})
    for method, path in public:
        # logins: a password/token/credential one, and an EC2-signed request (Keystone's)
        assert method in ("GET", "HEAD") or path in (
            "/identity/v3/auth/tokens", "/identity/v3/ec2tokens", "/identity/v3/s3tokens"), (
                method, path)
    assert ("POST", "/identity/v3/auth/tokens") in public
