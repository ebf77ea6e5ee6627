"""The wire's admin API (`/dataplane/v1`): a token, an admin, and a wire to read.

With `dataplane.driver: none` (these clouds) the status says so and the wire and path
answer 409; the live reading is tested in tests/dataplane/test_wire_view.py."""

from __future__ import annotations

SERVER = "00000000-0000-4000-8000-000000000000"


def test_without_a_token_401_and_members_403(api):
    for url in ("/dataplane/v1", "/dataplane/v1/wire",
                f"/dataplane/v1/path?source={SERVER}&destination={SERVER}"):
        r = api.get(url, user=None)
        assert r.status_code == 401, (url, r.text)
        assert r.headers["www-authenticate"].startswith("Keystone uri=")
        r = api.get(url, user="demo")
        assert r.status_code == 403, (url, r.text)
        assert r.json()["error"]["code"] == 403


def test_driver_none_is_a_clear_conflict(api):
    r = api.get("/dataplane/v1")
    assert r.status_code == 200, r.text
    status = r.json()["dataplane"]
    assert (status["driver"], status["readable"]) == ("none", False)
    assert status["prefix"].startswith("sl")
    for url in ("/dataplane/v1/wire",
                f"/dataplane/v1/path?source={SERVER}&destination={SERVER}"):
        r = api.get(url)
        assert r.status_code == 409, (url, r.text)
        assert "dataplane.driver is none" in r.json()["error"]["message"]
