"""The host tools' pure parts (stackling/access): addresses, users, ssh_config's text,
the proxy's allow list, and the serving record the audit and the tools read."""

from __future__ import annotations

import json
from pathlib import Path

from stackling.access import cloud, proxy, ssh, ssh_config

SERVER = {"id": "5b7e3c1a-0000-4000-8000-000000000001", "name": "vm1", "addresses": {"net": [
    {"version": 6, "addr": "fd00::5", "OS-EXT-IPS:type": "fixed"},
    {"version": 4, "addr": "10.0.0.5", "OS-EXT-IPS:type": "fixed"},
    {"version": 4, "addr": "172.24.4.9", "OS-EXT-IPS:type": "floating"}]}}


def test_addresses_floating_first_then_ipv4() -> None:
    assert ssh.addresses(SERVER) == ["172.24.4.9", "10.0.0.5", "fd00::5"]
    assert ssh.addresses({"addresses": {}}) == []


def test_image_user() -> None:
    assert ssh.image_user({"name": "cirros"}) == "cirros"
    assert ssh.image_user({"name": "x", "os_distro": "ubuntu"}) == "ubuntu"
    assert ssh.image_user({"name": "x", "os_distro": "ubuntu", "os_admin_user": "me"}) == "me"
    assert ssh.image_user({"name": "x", "properties": {"os_admin_user": "ops"}}) == "ops"
    assert ssh.image_user({"name": "x"}) is None and ssh.image_user(None) is None


def test_host_patterns_cover_the_range() -> None:
    assert ssh_config.host_patterns("10.0.0.0/8") == ["10.*"]
    assert ssh_config.host_patterns("172.24.4.0/24") == ["172.24.4.*"]
    assert ssh_config.host_patterns("172.24.4.0/22") == [f"172.24.{i}.*" for i in range(4, 8)]
    assert ssh_config.host_patterns("10.64.0.0/11") == ["10.*"]  # 32 /16s: the /8
    assert ssh_config.host_patterns("fd00:1::/64") == ["fd00:*"]
    assert ssh_config.host_patterns("0.0.0.0/0") == []


def test_render(tmp_path: Path) -> None:
    text = ssh_config.render("sl1234-outside", "/v/bin/stackling", tmp_path, [SERVER],
                             {SERVER["id"]: "cirros"}, ["10.0.0.0/26"], None)
    assert f"Host vm1 {SERVER['id']} 172.24.4.9 10.0.0.5 fd00::5\n    HostName 172.24.4.9\n" \
           "    User cirros\n    ProxyCommand /v/bin/stackling connect --namespace " \
           "sl1234-outside %h %p\n" in text
    assert f"HostKeyAlias {SERVER['id']}" in text and "Host 10.0.0.*\n" in text
    assert f"UserKnownHostsFile {tmp_path.resolve()}/ssh/known_hosts" in text


def test_prune_known_hosts(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    gone = "5b7e3c1a-0000-4000-8000-000000000002"
    path.write_text(f"{SERVER['id']} ssh-ed25519 A\n{gone} ssh-ed25519 B\n10.0.0.5 ssh-ed25519 C\n")
    assert ssh_config.prune_known_hosts(path, {SERVER["id"]}) == 1
    assert gone not in path.read_text() and "10.0.0.5" in path.read_text()


def test_cloud_addresses_refresh_on_a_miss_only_now_and_then() -> None:
    reads = []

    def read() -> tuple[set[str], dict[str, str]]:
        reads.append(1)
        return {"172.24.4.9", "fd00::5"}, {"vm1": "172.24.4.9"}

    allowed = proxy.CloudAddresses(read)
    assert allowed.resolve("vm1") == "172.24.4.9" and len(reads) == 1
    assert allowed.resolve("fd00:0::5") == "fd00::5"
    assert allowed.resolve("127.0.0.1") is None and len(reads) == 1  # read just now


def test_serving_settings_are_the_servers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cloud.record_serving(data, {"database_url": "sqlite:////x/y.db"},
                         {"STACKLING_DATAPLANE__DRIVER": "netns", "STACKLING_ADMIN_PASSWORD": "s"})
    doc = json.loads((data / "serving.json").read_text())
    assert "STACKLING_ADMIN_PASSWORD" not in doc["environment"]
    assert (data / "serving.json").stat().st_mode & 0o777 == 0o600
    settings = cloud.serving_settings({"data_dir": str(data)}, environ={})
    assert settings.dataplane.driver == "netns" and settings.db_url == "sqlite:////x/y.db"
    # found from the clients' clouds.yaml in its folder
    (data / "clouds.yaml").write_text("clouds: {stackling: {}}\n")
    found, how = cloud.find_data_dir(None, {"OS_CLIENT_CONFIG_FILE": str(data / "clouds.yaml")})
    assert found == data.resolve() and "clouds.yaml" in how
    # a flag given wins over the record
    assert cloud.serving_settings({"data_dir": str(data), "database_url": "sqlite:////z.db"},
                                  environ={}).db_url == "sqlite:////z.db"
