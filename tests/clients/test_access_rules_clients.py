"""Application credential access rules through real clients (issue 19, item 7): a
credential limited to listing networks lists them with openstacksdk and the CLI, and is
refused (401) anything else, on every backend."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import sdk_connection, sqlite_only

RULES = [{"service": "network", "method": "GET", "path": "/v2.0/networks"},
         {"service": "identity", "method": "GET", "path": "/v3/auth/catalog"}]


def _appcred_cloud(cloud, tmp, cred_id: str, secret: str):
    path = tmp / "appcred-clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {"limited": {
        "auth_type": "v3applicationcredential", "region_name": "RegionOne",
        "identity_api_version": 3, "interface": "public",
        "auth": {"auth_url": f"{cloud.url}/identity",
                 "application_credential_id": cred_id,
                 "application_credential_secret": secret}}}}))
    return path, "limited"


def _refused(call) -> None:
    with pytest.raises(Exception) as info:  # noqa: PT011 - keystoneauth's or the sdk's 401
        call()
    text = str(info.value)
    assert ("401" in text or "requires authentication" in text
            or "Unauthorized" in type(info.value).__name__), text


def test_sdk_credential_limited_to_listing_networks(cloud, tmp_path):
    member = cloud.new_project_member()
    conn = member["sdk"]
    net = conn.network.create_network(name="visible")
    cred = conn.identity.create_application_credential(
        user=conn.current_user_id, name="lister", access_rules=RULES)
    assert [(r["service"], r["method"], r["path"]) for r in cred.access_rules] == [
        (r["service"], r["method"], r["path"]) for r in RULES]
    path, name = _appcred_cloud(cloud, tmp_path, cred.id, cred.secret)
    limited = sdk_connection(path, name)
    assert net.id in [n.id for n in limited.network.networks()]
    _refused(lambda: limited.network.create_network(name="nope"))
    _refused(lambda: limited.network.get_network(net.id))
    _refused(lambda: list(limited.compute.flavors()))
    _refused(lambda: list(limited.image.images()))
    assert "nope" not in [n.name for n in conn.network.networks()]


@sqlite_only
def test_cli_credential_with_access_rules(cloud, tmp_path):
    member = cloud.new_project_member()
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}
    made = cloud.cli("application", "credential", "create", "lister", "--access-rules",
                     json.dumps(RULES), "-f", "json", cloud="", env=env)
    made = {k.lower().replace(" ", "_"): v for k, v in made.items()}
    assert "/v2.0/networks" in str(made["access_rules"])
    path, name = _appcred_cloud(cloud, tmp_path, made["id"], made["secret"])
    cli_env = {"OS_CLIENT_CONFIG_FILE": str(path)}
    assert isinstance(cloud.cli("network", "list", "-f", "json", cloud=name, env=cli_env), list)
    refused = cloud.cli("network", "create", "nope", cloud=name, env=cli_env, check=False)
    assert refused.returncode != 0
    assert "401" in refused.stderr or "Unauthorized" in refused.stderr, refused.stderr
