"""`stackling ssh SERVER [-- CMD]`: OpenSSH's ssh to a server, run inside the cloud's
outside namespace (as `vagrant ssh` does for its boxes).

The address is the server's floating IP, else its fixed one (IPv4 first); the user is the
image's `os_admin_user` property, else the usual cloud user of its `os_distro` (cirros's
is `cirros`). Host keys go to the cloud's own known-hosts file (DIR/ssh/known_hosts) under
the server's id (HostKeyAlias), so a new server on an old address is a new host, never a
"host identification has changed"; a key is accepted on first use (no terminal needed).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The default cloud user of the images' os_distro values (Glance's common image
# properties), as their cloud images ship it.
DISTRO_USERS = {
    "cirros": "cirros", "ubuntu": "ubuntu", "debian": "debian", "fedora": "fedora",
    "centos": "cloud-user", "rhel": "cloud-user", "rocky": "rocky", "almalinux": "almalinux",
    "opensuse": "opensuse", "sles": "sles", "alpine": "alpine", "arch": "arch",
    "freebsd": "freebsd", "gentoo": "gentoo",
}


def known_hosts(data_dir: Path) -> Path:
    directory = Path(data_dir).resolve() / "ssh"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / "known_hosts"
    path.touch(mode=0o600, exist_ok=True)
    return path


def addresses(server: Mapping[str, Any]) -> list[str]:
    """The server's addresses in the order a user would try them: floating before fixed,
    IPv4 before IPv6 (Nova's `addresses`, OS-EXT-IPS:type)."""
    found = [(a.get("OS-EXT-IPS:type") != "floating", a.get("version") != 4, a["addr"])
             for entries in (server.get("addresses") or {}).values() for a in entries]
    return [addr for *_, addr in sorted(found, key=lambda t: t[:2])]


def image_user(image: Mapping[str, Any] | None) -> str | None:
    """The login user an image names (os_admin_user), else its distribution's."""
    if not image:
        return None
    props = {**(image.get("properties") or {}), **image}
    if props.get("os_admin_user"):
        return str(props["os_admin_user"])
    distro = str(props.get("os_distro") or "").lower()
    if distro in DISTRO_USERS:
        return DISTRO_USERS[distro]
    return "cirros" if "cirros" in str(image.get("name") or "").lower() else None


def options(data_dir: Path, server_id: str) -> list[str]:
    return ["-o", f"UserKnownHostsFile={known_hosts(data_dir)}",
            "-o", "StrictHostKeyChecking=accept-new", "-o", f"HostKeyAlias={server_id}",
            # kept by id in the clear (Debian's ssh_config hashes): ssh-config prunes by it
            "-o", "HashKnownHosts=no",
            # a guest's sshd starts after the server is ACTIVE: try for half a minute
            "-o", "ConnectTimeout=5", "-o", "ConnectionAttempts=30"]


def command(namespace: str, data_dir: Path, server: Mapping[str, Any], user: str | None,
            identity: str | None, extra: list[str], remote: list[str]) -> list[str]:
    """The argv that runs ssh to `server` inside `namespace`."""
    found = addresses(server)
    if not found:
        raise LookupError(f"server {server.get('name')} has no address")
    argv = ["nsenter", f"--net=/run/netns/{namespace}", "--", "ssh",
            *options(data_dir, str(server["id"]))]
    if identity:
        argv += ["-i", identity]
    if user:
        argv += ["-l", user]
    return [*argv, *extra, found[0], *remote]


def find(conn: Any, name_or_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The server (by name or id, as openstackclient finds it) and its image."""
    from openstack import exceptions

    try:
        server = conn.compute.find_server(name_or_id, ignore_missing=False)
    except exceptions.DuplicateResource:
        raise LookupError(f"more than one server is named {name_or_id}: give its id") from None
    except exceptions.NotFoundException:
        raise LookupError(f"no server {name_or_id}") from None
    server = conn.compute.get_server(server.id)  # find by name lists without addresses
    image = None
    image_id = (server.image or {}).get("id")
    if image_id:
        try:
            image = conn.image.get_image(image_id).to_dict()
        except exceptions.SDKException:
            image = None  # deleted, or not visible to this user: no user from it
    return server.to_dict(original_names=True), image
