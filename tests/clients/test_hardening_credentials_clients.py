"""Delegating credentials through the `openstack` CLI (the raw-request stories, on every
backend, are in tests/api/test_hardening_credentials.py): `openstack credential create`
takes no trust from the blob it is given and `credential set` cannot add one; `openstack
ec2 credentials create` with a trust-scoped token or an application credential makes a
credential whose logins are that trust's or that application credential's, no more."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.conftest import sqlite_only


def _env(cloud: Any, member: dict[str, Any], **extra: str) -> dict[str, str]:
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}
    env.update(extra)
    return {k: v for k, v in env.items() if v}


def _lower(shown: dict[str, Any]) -> dict[str, Any]:
    return {k.lower().replace(" ", "_"): v for k, v in shown.items()}


def _ec2_login(cloud: Any, access: str, secret: str) -> httpx.Response:
    """POST /v3/ec2tokens for a request signed as an EC2 client signs it."""
    from keystoneclient.contrib.ec2.utils import Ec2Signer

    creds = {"access": access, "host": "127.0.0.1:8773", "verb": "GET", "path": "/",
             "params": {"SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
                        "Action": "DescribeInstances"}}
    creds["signature"] = Ec2Signer(secret).generate(creds)
    return httpx.post(f"{cloud.url}/identity/v3/ec2tokens", json={"credentials": creds},
                      timeout=30)


def _trust_from_demo(cloud: Any, trustee_id: str) -> tuple[str, str]:
    """demo delegates member on its project to `trustee_id`, impersonating; (trust, project)."""
    token = cloud.token("demo")
    with cloud.http(token) as http:
        me = http.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": token}).json()
        project = me["token"]["project"]["id"]
        r = http.post("/identity/v3/OS-TRUST/trusts", json={"trust": {
            "trustor_user_id": me["token"]["user"]["id"], "trustee_user_id": trustee_id,
            "project_id": project, "impersonation": True, "roles": [{"name": "member"}]}})
    assert r.status_code == 201, r.text
    return r.json()["trust"]["id"], project


@sqlite_only
def test_cli_credential_create_takes_no_trust_from_its_blob(cloud):
    trustee, mallory = cloud.new_project_member(), cloud.new_project_member()
    trust, demo_project = _trust_from_demo(cloud, trustee["user"].id)
    env = _env(cloud, mallory)
    access, secret = uuid.uuid4().hex, uuid.uuid4().hex
    planted = json.dumps({"access": access, "secret": secret, "trust_id": trust})
    made = _lower(cloud.cli("credential", "create", "--type", "ec2", "--project",
                            mallory["project"].id, mallory["user"].id, planted, "-f", "json",
                            cloud="", env=env))
    assert "trust_id" not in json.loads(made["blob"]), made
    r = _ec2_login(cloud, access, secret)
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert token["user"]["id"] == mallory["user"].id, token["user"]
    assert token["project"]["id"] == mallory["project"].id and "OS-TRUST:trust" not in token
    with httpx.Client(base_url=cloud.url, timeout=30) as http:
        r = http.post("/networking/v2.0/networks", headers={
            "X-Auth-Token": r.headers["X-Subject-Token"]}, json={"network": {
                "name": "stolen", "project_id": demo_project}})
    assert r.status_code == 400, r.text  # not demo's: Neutron's "requires admin privileges"
    refused = cloud.cli("credential", "set", "--user", mallory["user"].id, "--type", "ec2",
                        "--project", mallory["project"].id, "--data", planted, made["id"],
                        cloud="", env=env, check=False)
    assert refused.returncode != 0
    assert "trust_id can not be updated for credential" in refused.stderr, refused.stderr

    # the trustee's own credential, made with its trust-scoped token, is the trust's
    trustee_env = _env(cloud, trustee, OS_PROJECT_NAME="", OS_PROJECT_DOMAIN_NAME="",
                       OS_TRUST_ID=trust)
    ec2 = _lower(cloud.cli("ec2", "credentials", "create", "-f", "json", cloud="",
                           env=trustee_env))
    assert ec2["trust_id"] == trust, ec2
    r = _ec2_login(cloud, ec2["access"], ec2["secret"])
    assert r.status_code == 200, r.text
    assert r.json()["token"]["OS-TRUST:trust"]["id"] == trust
    assert r.json()["token"]["project"]["id"] == demo_project


def _appcred_cloud(cloud: Any, tmp: Path, made: dict[str, Any]) -> dict[str, str]:
    path = tmp / "appcred-clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {"appcred": {
        "auth_type": "v3applicationcredential", "region_name": "RegionOne",
        "identity_api_version": 3, "interface": "public",
        "auth": {"auth_url": f"{cloud.url}/identity", "application_credential_id": made["id"],
                 "application_credential_secret": made["secret"]}}}}))
    return {"OS_CLIENT_CONFIG_FILE": str(path)}


@sqlite_only
def test_cli_ec2_credentials_of_a_reader_application_credential(cloud, tmp_path):
    member = cloud.new_project_member()
    env = _env(cloud, member)
    made = _lower(cloud.cli("application", "credential", "create", "ec2-maker", "--role",
                            "reader", "-f", "json", cloud="", env=env))
    appcred_env = _appcred_cloud(cloud, tmp_path, made)
    ec2 = _lower(cloud.cli("ec2", "credentials", "create", "-f", "json", cloud="appcred",
                           env=appcred_env))
    r = _ec2_login(cloud, ec2["access"], ec2["secret"])
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert [x["name"] for x in token["roles"]] == ["reader"]
    assert token["application_credential"]["id"] == made["id"]
    with httpx.Client(base_url=cloud.url, timeout=30, headers={
            "X-Auth-Token": r.headers["X-Subject-Token"]}) as http:
        assert http.post("/networking/v2.0/networks", json={"network": {"name": "n"}}
                         ).status_code == 403  # a reader's
        assert http.get("/networking/v2.0/networks").status_code == 200
    cloud.cli("application", "credential", "delete", "ec2-maker", cloud="", env=env,
              parse=False)
    listed = cloud.cli("ec2", "credentials", "list", "-f", "json", cloud="", env=env)
    assert ec2["access"] in [_lower(c)["access"] for c in listed]  # kept, as Keystone, but:
    r = _ec2_login(cloud, ec2["access"], ec2["secret"])
    assert r.status_code == 401, r.text
