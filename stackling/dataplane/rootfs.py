"""The one minimal root filesystem every guest boots, whatever its image: busybox, Debian's
dropbear and setpriv with the libraries they link, and the guest's boot scripts.

Built once per cloud into its run directory and bind-mounted read-only into each guest;
a guest's writable directories are tmpfs of its own (the launcher mounts them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

BUSYBOX = "/bin/busybox"
# Host binaries copied in with their shared libraries.
BINARIES = {"/usr/sbin/dropbear": "usr/sbin/dropbear", "/usr/bin/setpriv": "usr/bin/setpriv"}
WRITABLE = ("etc", "tmp", "run", "root", "home", "var", "dev", "proc")

# The guest's PID 1 (busybox sh): network by DHCP, then what the metadata service says,
# then capabilities dropped for good, user data, and the SSH server.
INIT = r"""#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
echo "[    0.000000] stackling guest: busybox $(busybox | head -1 | cut -d' ' -f2), $(uname -r)"
echo "Run /sbin/init as init process"
ip link set lo up
for nic in $(ip -o link | sed -n 's/^[0-9]*: \(eth[0-9]*\)[:@].*/\1/p'); do
  ip link set "$nic" up
  udhcpc -i "$nic" -f -q -n -t 20 -T 1 -A 1 -O staticroutes -O mtu -S -s /sbin/dhcp-event \
    -x hostname:"$(cat /etc/stackling/name)" 2>&1 || echo "udhcpc: no lease on $nic"
done
# busybox's static wget crashes in a chroot without NSS: plain HTTP/1.0 over nc instead
fetch() {
  printf 'GET /%s HTTP/1.0\r\nHost: 169.254.169.254\r\n\r\n' "$1" \
    | nc -w 3 169.254.169.254 80 > /tmp/.md 2>/dev/null || return 1
  head -1 /tmp/.md | grep -q ' 200 ' || { rm -f /tmp/.md; return 1; }
  awk 'body { print } /^\r?$/ { body = 1 }' /tmp/.md > "$2"; rm -f /tmp/.md
}
user=$(cat /etc/stackling/user)
if fetch latest/meta-data/hostname /tmp/.hostname; then
  host=$(cut -d. -f1 /tmp/.hostname); hostname "$host"; echo "$host" > /etc/hostname
fi
mkdir -p "/home/$user/.ssh"
if fetch latest/meta-data/public-keys/0/openssh-key "/home/$user/.ssh/authorized_keys"; then
  echo "ci-info: ++++ Authorized keys from /home/$user/.ssh/authorized_keys for user $user ++++"
fi
chown -R "$user:$user" "/home/$user"; chmod 700 "/home/$user/.ssh"
fetch openstack/latest/user_data /run/user-data || rm -f /run/user-data
for nic in $(ip -o link | sed -n 's/^[0-9]*: \(eth[0-9]*\)[:@].*/\1/p'); do
  addr=$(ip -o -4 addr show dev "$nic" | awk '{print $4}')
  mac=$(ip -o link show "$nic" | sed 's/.*ether \([^ ]*\).*/\1/')
  echo "ci-info: | $nic | True | ${addr:-.} | $mac |"
done
exec /usr/bin/setpriv --bounding-set="$(cat /etc/stackling/caps)" --inh-caps=-all /bin/sh /sbin/guest-run
"""

# After boot: no capability to reconfigure the network, mount or set the host name.
RUN = r"""#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
if [ -s /run/user-data ] && [ "$(head -c 2 /run/user-data)" = "#!" ]; then
  chmod 700 /run/user-data
  echo "cloud-init: running user_data script"
  /run/user-data 2>&1 | sed 's/^/user_data: /'
fi
echo "$(hostname) login: "
exec /usr/sbin/dropbear -F -E -R -s -p 22
"""

# udhcpc's event script: the lease's address, routes (RFC 3442 routes replace `router`),
# MTU, DNS servers and search domain; the lease's options are kept in /run/udhcpc.<nic>.
DHCP_EVENT = r"""#!/bin/sh
case "$1" in
  deconfig) ip -4 addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    [ -n "$mtu" ] && ip link set "$interface" mtu "$mtu"
    if [ -n "$staticroutes" ]; then
      set -- $staticroutes
      while [ $# -ge 2 ]; do
        if [ "$1" = 0.0.0.0/0 ]; then ip route replace default via "$2" dev "$interface"
        else ip route replace "$1" via "$2" dev "$interface"; fi
        shift 2
      done
    elif [ -n "$router" ]; then
      ip route replace default via "${router%% *}" dev "$interface"
    fi
    : > /etc/resolv.conf
    for s in $dns; do echo "nameserver $s" >> /etc/resolv.conf; done
    [ -n "$search$domain" ] && echo "search ${search:-$domain}" >> /etc/resolv.conf
    env | grep -v '^PATH=\|^HOME=\|^PWD=\|^SHLVL=' | sort > "/run/udhcpc.$interface"  # the lease
    echo "udhcpc: lease of $ip obtained from $serverid on $interface" ;;
esac
exit 0
"""


def _libraries(binary: str) -> list[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"(/\S+\.so[.\d]*)", out)


def build(root: Path) -> Path:
    """Build the template once (idempotent: an existing complete template is kept)."""
    done = root / ".complete"
    if done.exists():
        return root
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", *WRITABLE):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, tmp / "bin/busybox")
    applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        link = tmp / "bin" / applet
        if applet not in ("busybox", "setpriv") and not link.exists():
            link.symlink_to("busybox")
    for src, dst in BINARIES.items():
        shutil.copy2(src, tmp / dst)
        for lib in _libraries(src):
            target = tmp / lib.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copy2(os.path.realpath(lib), target)
    for name, text in (("sbin/guest-init", INIT), ("sbin/guest-run", RUN),
                       ("sbin/dhcp-event", DHCP_EVENT)):
        (tmp / name).write_text(text)
        (tmp / name).chmod(0o755)
    (tmp / ".complete").touch()
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root
