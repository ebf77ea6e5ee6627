"""`stackling ssh-config`: an OpenSSH client configuration for a cloud's guests.

A `Host` per server (its name, id and addresses, so `ssh vm1` and Ansible's inventory
addresses both match) and one for the cloud's address ranges; every one goes through
`stackling connect` (the ProxyCommand: stdio relayed to a socket opened in the outside
namespace), keeps host keys in the cloud's own known-hosts file and accepts a new one
without a terminal. Plain `ssh -F`, `scp -F`, `rsync -e 'ssh -F …'` and Ansible use it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from stackling.access import ssh

# A range wider than this many host patterns is matched by its enclosing octet boundary.
MAX_PATTERNS = 16
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def host_patterns(cidr: str) -> list[str]:
    """OpenSSH `Host` patterns (globs, not CIDRs) covering `cidr`, never narrower."""
    net = ipaddress.ip_network(cidr, strict=False)
    if net.version == 6:
        # a leading hextet that is not zero reads the same in every form of the address
        first = net.network_address.exploded.split(":")[0].lstrip("0")
        return [f"{first}:*"] if net.prefixlen >= 16 and first else []
    fixed, rest = divmod(net.prefixlen, 8)  # whole octets, bits of the next one
    octets = str(net.network_address).split(".")
    if fixed == 0:
        return []  # wider than a /8: not a range of this cloud's
    if rest == 0 or fixed == 4:
        return [".".join(octets[:fixed]) + (".*" if fixed < 4 else "")]
    count = 2 ** (8 - rest)  # values the next octet takes
    if count > MAX_PATTERNS:
        return [".".join(octets[:fixed]) + ".*"]
    tail = ".*" if fixed < 3 else ""
    return [".".join([*octets[:fixed], str(int(octets[fixed]) + i)]) + tail
            for i in range(count)]


def _block(names: Iterable[str], options: Mapping[str, str]) -> list[str]:
    return [f"Host {' '.join(names)}", *(f"    {k} {v}" for k, v in options.items()), ""]


def render(namespace: str, stackling: str, data_dir: Path, servers: list[Mapping[str, Any]],
           users: Mapping[str, str | None], cidrs: Iterable[str], identity: str | None) -> str:
    """The configuration text. `users` maps a server id to its image's login user."""
    common = {"ProxyCommand": f"{stackling} connect --namespace {namespace} %h %p",
              "UserKnownHostsFile": str(ssh.known_hosts(data_dir)),
              "StrictHostKeyChecking": "accept-new", "HashKnownHosts": "no"}
    if identity:
        common["IdentityFile"] = str(Path(identity).expanduser().resolve())
    out = [f"# stackling: the guests of the cloud in {Path(data_dir).resolve()}, reached "
           f"through its outside namespace {namespace}", ""]
    for server in sorted(servers, key=lambda s: (str(s.get("name")), str(s["id"]))):
        found = ssh.addresses(server)
        options = {"HostName": found[0]} if found else {}
        if users.get(str(server["id"])):
            options["User"] = str(users[str(server["id"])])
        options.update({**common, "HostKeyAlias": str(server["id"])})
        names = dict.fromkeys([str(server.get("name") or ""), str(server["id"]), *found])
        out += _block([n for n in names if n and " " not in n], options)
    patterns = dict.fromkeys(p for cidr in cidrs for p in host_patterns(cidr))
    if patterns:
        out += _block(patterns, common)
    return "\n".join(out)


def prune_known_hosts(path: Path, server_ids: set[str]) -> int:
    """Drop the host keys kept for servers that no longer exist (their id, the alias, is
    the first field); how many were dropped."""
    if not path.exists():
        return 0
    keep, dropped = [], 0
    for line in path.read_text().splitlines():
        host = line.split(" ", 1)[0]
        if _UUID.match(host) and host not in server_ids:
            dropped += 1
            continue
        keep.append(line)
    if dropped:
        path.write_text("".join(f"{line}\n" for line in keep))
    return dropped
