"""Issue 19, item 15: the access log names the client, and a login's cost does not tell
whether the user exists.

- Every access line carries the client's address: the socket's peer, or the first
  `X-Forwarded-For` entry only when proxy headers are trusted
  (`http.enable_proxy_headers_parsing`); any client can send that header.
- A password login runs one bcrypt check whatever fails: an unknown user, a user looked up
  in a domain that does not exist or is not theirs, a user without a password, a disabled
  user, an unknown application credential. Before, only an existing user's password was
  hashed, so a failed login answered faster for names that do not exist.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import ADMIN_PASSWORD, make_api

TOKENS = "/identity/v3/auth/tokens"


def password_auth(user: dict[str, Any], password: str) -> dict[str, Any]:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        **user, "password": password}}}}}


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The hashes bcrypt checked a password against during the test."""
    from stackling.identity import logic

    seen: list[bytes] = []
    real = logic.bcrypt.checkpw

    def counting(password: bytes, hashed: bytes) -> bool:
        seen.append(hashed)
        return real(password, hashed)

    monkeypatch.setattr(logic.bcrypt, "checkpw", counting)
    return seen


@pytest.fixture(scope="module")
def users(api) -> dict[str, str]:
    ids = {}
    for name, extra in (("off", {"password": "pw-secret", "enabled": False}),
                        ("nopw", {})):
        r = api.post("/identity/v3/users", json={"user": {"name": name, **extra}})
        assert r.status_code == 201, r.text
        ids[name] = r.json()["user"]["id"]
    return ids


@pytest.mark.parametrize("case", [
    "unknown name", "unknown id", "unknown domain", "domain not the user's", "no password",
    "disabled", "wrong password"])
def test_every_failed_login_costs_one_password_hash(api, users, checks, case):
    user = {
        "unknown name": {"name": "nobody-at-all", "domain": {"id": "default"}},
        "unknown id": {"id": "0" * 32},
        "unknown domain": {"name": "admin", "domain": {"name": "no-such-domain"}},
        "domain not the user's": {"name": "admin", "domain": {"id": "0" * 32}},
        "no password": {"name": "nopw", "domain": {"id": "default"}},
        "disabled": {"name": "off", "domain": {"id": "default"}},
        "wrong password": {"name": "admin", "domain": {"id": "default"}},
    }[case]
    password = "pw-secret" if case == "disabled" else "not-the-password"
    r = api.post(TOKENS, user=None, json=password_auth(user, password))
    assert r.status_code == 401, r.text
    assert len(checks) == 1, checks
    # ...at the deployment's cost (the tests' servers use bcrypt's cheapest, 4 rounds).
    rounds = api.runtime.settings.identity.password_hash_rounds
    assert checks[0].split(b"$")[2] == b"%02d" % rounds


def test_an_unknown_application_credential_costs_a_hash_too(api, checks):
    r = api.post(TOKENS, user=None, json={"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": "0" * 32, "secret": "s"}}}})
    assert r.status_code == 401, r.text
    assert len(checks) == 1


def test_a_good_login_still_works(api, checks):
    r = api.post(TOKENS, user=None, json=password_auth(
        {"name": "admin", "domain": {"id": "default"}}, ADMIN_PASSWORD))
    assert r.status_code == 201, r.text
    assert len(checks) == 1


# ------------------------------------------------------------------ access log
def test_the_access_line_names_the_socket_peer(api, caplog):
    caplog.set_level(logging.INFO, logger="stackling.access")
    # X-Forwarded-For from a client that is not a trusted proxy is ignored.
    r = api.get("/networking/v2.0/networks", headers={"X-Forwarded-For": "203.0.113.9"})
    assert r.status_code == 200
    records = [rec for rec in caplog.records if rec.name == "stackling.access"
               and rec.getMessage().startswith("GET /networking/v2.0/networks 200")]
    assert records, [rec.getMessage() for rec in caplog.records]
    assert records[-1].client == "testclient"  # Starlette's TestClient peer
    assert records[-1].getMessage().endswith("client=testclient")


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from make_api(tmp_path_factory.mktemp("proxied"),
                        http={"enable_proxy_headers_parsing": True})


def test_behind_a_trusted_proxy_the_line_names_the_forwarded_client(proxied, caplog):
    caplog.set_level(logging.INFO, logger="stackling.access")
    r = proxied.get("/identity/v3", user=None,
                    headers={"X-Forwarded-For": "203.0.113.9, 10.0.0.1"})
    assert r.status_code == 200
    records = [rec for rec in caplog.records if rec.name == "stackling.access"]
    assert records[-1].client == "203.0.113.9"
    assert "client=203.0.113.9" in records[-1].getMessage()
