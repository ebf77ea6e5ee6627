"""The one minimal root filesystem every guest boots, whatever its image: busybox, Debian's
dropbear and setpriv with the libraries they link, and the guest's boot scripts; as cirros's
root, also the tools cirros gives its user (sudo, curl, scp and sftp-server).

Built once per cloud into its run directory and bind-mounted read-only into each guest;
a guest's writable directories are tmpfs of its own (the launcher mounts them).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from stackling.dataplane import hotplug

BUSYBOX = "/bin/busybox"
# Host binaries copied in with their shared libraries.
BINARIES = {"/usr/sbin/dropbear": "usr/sbin/dropbear", "/usr/bin/setpriv": "usr/bin/setpriv"}
# Copied when the host has them: ISC dhclient is the guests' DHCPv6 client (Debian's
# busybox is built without udhcpc6); without it IPv6 guests have SLAAC only.
# The rest make the kit's root what cirros's is to its user (issue 30): Debian's sudo (its
# sudoers plugin and the PAM module its one PAM file names), curl, OpenSSH's scp (`scp -O`)
# and sftp-server where the kit's dropbear execs it for the sftp subsystem (its compiled
# SFTPSERVER_PATH; OpenSSH's scp speaks SFTP by default). busybox has the rest (wget, nc,
# ip, udhcpc, ping).
OPTIONAL_BINARIES = {"/usr/sbin/dhclient": "usr/sbin/dhclient",
                     "/sbin/dhclient": "usr/sbin/dhclient",
                     "/usr/bin/sudo": "usr/bin/sudo",
                     "/usr/libexec/sudo/sudoers.so": "usr/libexec/sudo/sudoers.so",
                     "/lib/x86_64-linux-gnu/security/pam_permit.so":
                         "lib/x86_64-linux-gnu/security/pam_permit.so",
                     "/lib/x86_64-linux-gnu/security/pam_deny.so":
                         "lib/x86_64-linux-gnu/security/pam_deny.so",
                     "/usr/bin/curl": "usr/bin/curl",
                     "/usr/bin/scp": "usr/bin/scp",
                     "/usr/lib/openssh/sftp-server": "usr/lib/sftp-server"}
# Set-user-ID root in the published kit only (publish(): a tmpfs the machine mounts nosuid, so
# no user of the machine runs them as its root; a cirros guest's root is an overlay of its
# own, where they are its root's): sudo, and busybox, whose own check drops the privilege
# for every applet but those that need it (ping, traceroute, su, passwd), as cirros and
# other busybox systems run them; the shell runs its applets through busybox itself, so a
# file capability on a copy of it is never used by `ping` typed in the shell
SETUID = ("bin/busybox", "usr/bin/sudo")
# cirros's sudo: the image's user has it without a password (INIT writes that at first boot,
# as cloud-init writes 90-cloud-init-users); nobody authenticates with a password (keys only)
KIT_FILES = {
    "etc/sudoers": ("Defaults env_reset\n"
                    'Defaults secure_path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:'
                    '/sbin:/bin"\n'
                    "root ALL=(ALL:ALL) ALL\n"
                    "@includedir /etc/sudoers.d\n", 0o440),
    "etc/pam.d/sudo": ("auth required pam_deny.so\naccount required pam_permit.so\n"
                       "session required pam_permit.so\n", 0o644),
}
WRITABLE = ("etc", "etc/sudoers.d", "etc/pam.d", "tmp", "run", "root", "home", "var", "dev",
            "proc")
# Where every guest has the kit, read-only (guests.LAUNCH binds it): the light init runs from
# there in an image's root, and the kit's own scripts name their shell there (an image may
# have no /bin/sh)
KIT = "/run/guest/kit"

# The guest's PID 1 (busybox sh): first the boundary it was meant to have is checked, then
# network by DHCP, what the metadata service says, user data, and the SSH server.
# One text for two guests: cirros's (its root is the kit: K is empty) and the light init's
# (an image without an init: its root is the image's, K is the kit's place, every tool and
# script of the boot is the kit's).
INIT = r"""#!/bin/sh
# Every fork is a boot's cost (100 guests boot at once on a restart from nothing): the
# shell's own read, case and parameter expansion stand in for cat, cut, sed and awk.
export K PATH=${K:+$K/bin:}/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
CR=$'\r'
# The image's own accounts, made at its first boot as cirros's are (kept after: its root
# filesystem is its own, copy-on-write); the image's user is the one the cloud names, its
# login shell the image's /bin/sh, or the kit's where the image has none
read -r name < /run/guest/name; read -r user < /run/guest/user
read -r dhcp4 < /run/guest/dhcp4 || true
shell=/bin/sh; [ -x /bin/sh ] || shell=$K/bin/sh
[ -d /etc ] || mkdir /etc
if [ ! -s /etc/passwd ]; then
  echo "root:x:0:0:root:/root:$shell" > /etc/passwd; echo 'root:x:0:' > /etc/group
  echo "$shell" > /etc/shells; [ -e /etc/hosts ] || echo "127.0.0.1 localhost" > /etc/hosts
fi
case "$(cat /etc/passwd)" in *"
$user:"*|"$user:"*) ;; *)
  uid=1000; while grep -q ":x:$uid:" /etc/passwd; do uid=$((uid + 1)); done
  echo "$user:x:$uid:$uid:$user:/home/$user:$shell" >> /etc/passwd
  echo "$user:x:$uid:" >> /etc/group
  # (a shadow entry where the image keeps them: PAM's account check wants one; no password)
  [ -e /etc/shadow ] && echo "$user:*:::::::" >> /etc/shadow
  # (an SSH server lets in only a shell /etc/shells lists)
  if [ -e /etc/shells ] || [ "$shell" != /bin/sh ]; then
    grep -qxF "$shell" /etc/shells 2>/dev/null || echo "$shell" >> /etc/shells
  fi ;;
esac
# cirros's sudo for its user, without a password
if [ -z "$K" ] && [ ! -e /etc/sudoers.d/90-cloud-init-users ]; then
  echo "$user ALL=(ALL) NOPASSWD:ALL" > /etc/sudoers.d/90-cloud-init-users
  chmod 440 /etc/sudoers.d/90-cloud-init-users
fi
if [ -z "$K" ]; then
  read -r kernel < /proc/sys/kernel/osrelease
  echo "[    0.000000] stackling guest: busybox @BUSYBOX_VERSION@, $kernel"
  echo "Run /sbin/init as init process"
else
  echo "stackling: light init: network by DHCP, the metadata service, user data, then SSH"
fi
# an image's resolv.conf may be a link to its resolver's file under /run (systemd-resolved's),
# which no init of its made: dhcp-event writes through it there
if [ -L /etc/resolv.conf ] && [ ! -e /etc/resolv.conf ]; then
  f=$(readlink /etc/resolv.conf); case "$f" in /*) ;; *) f=/etc/$f ;; esac
  mkdir -p "${f%/*}" 2>/dev/null || rm -f /etc/resolv.conf
fi
. $K/sbin/ipv6-pre
ip link set lo up
# NIC hot-plug (hotplug.py)
sh $K/sbin/nic-watch &
# the boot's NICs (not a trunk's eth<n>.<vid>), from one `ip -o link`
eths() {
  ip -o link > /tmp/.links
  while read -r _ nic rest; do
    nic=${nic%:}; nic=${nic%%@*}
    case "$nic" in eth*.*) ;; eth*) echo "$nic ${rest##*link/ether }" ;; esac
  done < /tmp/.links
  rm -f /tmp/.links
}
nics=""
while read -r nic _; do nics="$nics $nic"; done <<EOT
$(eths)
EOT
# A NIC whose port has a DHCPv4 server (the cloud says so, as a config drive would) asks
# until it answers, as a VM's DHCP client does (a busy cloud's dnsmasq may start late);
# another asks for udhcpc's 20 tries once
for nic in $nics; do
  ipv6_pre "$nic"
  ip link set "$nic" up
  rounds=1
  case " $dhcp4 " in *" $nic "*) rounds=30 ;; esac
  while :; do
    udhcpc -i "$nic" -f -q -n -t 20 -T 1 -A 1 -O staticroutes -O mtu -S -s $K/sbin/dhcp-event \
      -x hostname:"$name" 2>&1 && { v4=1; break; }
    rounds=$((rounds - 1))
    [ $rounds -gt 0 ] || { echo "udhcpc: no lease on $nic"; break; }
    echo "udhcpc: no lease on $nic yet, asking again"
  done
done
# The metadata service: 169.254.169.254 where DHCPv4 routed it; with no IPv4 lease (an
# IPv6-only guest: no IPv4 route to it) fe80::a9fe:a9fe on the first NIC, as Neutron serves
# IPv6-only networks, once the NIC's link-local address (the source the service knows it
# by) is usable
MD=169.254.169.254 MDHOST=169.254.169.254 MDWAIT=10
if [ -z "$v4" ]; then
  for nic in $nics; do
    i=0
    while [ $i -lt 30 ]; do
      case "$(ip -6 addr show dev "$nic" scope link)" in *tentative*|"") ;; *) break ;; esac
      sleep 0.1; i=$((i + 1))
    done
    # (a connect there takes milliseconds; where nothing has the address it takes the
    # whole wait, which a guest on a subnet without DHCP pays once)
    MD="fe80::a9fe:a9fe%$nic" MDHOST="[fe80::a9fe:a9fe]" MDWAIT=2; break
  done
fi
# busybox's static wget crashes in a chroot without NSS: plain HTTP/1.0 over nc instead
# (1: not there, 2: no answer, or 403: the service does not know this guest's address yet)
fetch() {
  nc -w $MDWAIT "$MD" 80 > /tmp/.md 2>/dev/null <<EOT
GET /$1 HTTP/1.0$CR
Host: $MDHOST$CR
$CR
EOT
  code=""
  { read -r _ code _
    if [ "$code" = 200 ]; then  # the headers, then the body as it is
      while IFS= read -r line && [ "$line" != "$CR" ] && [ -n "$line" ]; do :; done
      cat > "$2"
    fi; } < /tmp/.md
  rm -f /tmp/.md
  case "$code" in 200) ;; ""|403) return 2 ;; *) return 1 ;; esac
}
# As cloud-init: every document is asked for again while the service does not answer (up to
# 60 s each, as long as the guest has an IPv4 route to it), so a busy cloud never boots a
# guest without its key; one answered ask does not make the next one's timeout fatal. Over
# IPv6 (asked only once DHCPv4 has had its 20 s, the service's socket long open) a link
# where nothing answers the first ask has no metadata service (an IPv4 subnet without
# DHCP, or an IPv6 one: no DHCP namespace, as Neutron's): the boot stops asking
fetch_md() {
  tries=120
  while [ -n "$MD" ]; do
    fetch "$1" "$2"; rc=$?
    [ $rc -eq 2 ] || return $rc
    case "$MD" in
      *%*) [ "$code" = 403 ] || { MD=""; return 2; } ;;
      *) ip -4 route get "$MD" >/dev/null 2>&1 || return 2 ;;
    esac
    [ $tries -gt 0 ] || return 2
    tries=$((tries - 1)); sleep 0.5
  done
  return 2
}
if fetch_md latest/meta-data/hostname /tmp/.hostname; then
  read -r host < /tmp/.hostname; host=${host%%.*}
  hostname "$host"; echo "$host" > /etc/hostname
  # (the name resolves on the guest itself, as cirros's does: sudo looks it up)
  if [ -z "$K" ]; then
    hosts=""; while IFS= read -r line; do hosts="$hosts $line"; done < /etc/hosts
    case "$hosts " in *" $host "*) ;; *) echo "127.0.1.1 $host" >> /etc/hosts ;; esac
  fi
fi
mkdir -p "/home/$user/.ssh"
if fetch_md latest/meta-data/public-keys/0/openssh-key "/home/$user/.ssh/authorized_keys"; then
  echo "ci-info: ++++ Authorized keys from /home/$user/.ssh/authorized_keys for user $user ++++"
else
  echo "ci-info: no authorized keys for user $user (metadata: $?)"
fi
chown -R "$user:$user" "/home/$user"; chmod 700 "/home/$user/.ssh"
fetch_md openstack/latest/user_data /run/user-data || rm -f /run/user-data
fetch_md openstack/latest/network_data.json /run/network_data.json || rm -f /run/network_data.json
touch /run/.metadata-done  # ipv6-up reads this boot's network_data.json rather than asking
nd=""; [ -s /run/network_data.json ] && read -r nd < /run/network_data.json
# DHCPv6 in the background where the cloud says so (Nova's network types, as cloud-init reads
# them); with no metadata (an IPv6-only guest, whose DHCPv4 had its 20 s) the RA decides
case "$nd" in
  "") for nic in $nics; do sh $K/sbin/ipv6-up "$nic" ra & done ;;
  *'"ipv6_dhcp'*) for nic in $nics; do sh $K/sbin/ipv6-up "$nic" & done ;;
esac
# trunk sub-ports: network_data.json's VLAN links (as cloud-init reads them), each an
# interface eth<n>.<vid> with the sub-port's MAC, waited for and given its address by DHCP
case "$nd" in *'"type": "vlan"'*)
  for vlan in $(tr '{' '\n' < /run/network_data.json | grep '"type": "vlan"' \
      | sed -n 's/.*"vlan_id": \([0-9]*\).*"vlan_mac_address": "\([^"]*\)".*/\1,\2/p'); do
    mac=${vlan#*,} nic="" i=0
    while [ -z "$nic" ] && [ $i -lt 100 ]; do
      nic=$(ip -o link | grep -i "ether $mac" | sed -n 's/^[0-9]*: \(eth[0-9]*\.[0-9]*\)[:@].*/\1/p')
      [ -n "$nic" ] || { sleep 0.1; i=$((i + 1)); }
    done
    [ -n "$nic" ] || { echo "vlan ${vlan%%,*}: no interface"; continue; }
    ip link set "$nic" up
    SUBPORT=1 udhcpc -i "$nic" -f -q -n -t 20 -T 1 -A 1 -O mtu -S -s $K/sbin/dhcp-event 2>&1 \
      || echo "udhcpc: no lease on $nic"
  done ;;
esac
ip -o -4 addr > /tmp/.addrs
while read -r nic mac; do
  [ -n "$nic" ] || continue  # (no NIC at all)
  addr=.
  while read -r _ n family a _; do
    [ "$n" = "$nic" ] && [ "$family" = inet ] && addr=$a
  done < /tmp/.addrs
  echo "ci-info: | $nic | True | $addr | ${mac%% *} |"
done <<EOT
$(eths)
EOT
rm -f /tmp/.addrs
exec sh $K/sbin/guest-run
"""

# The light init (issue 30): an image without a usable init boots the kit's init from its own
# root (BOOT's last step), as LocalStack's EC2 starts a Docker image's SSH server.
LIGHT_INIT = f"""K={KIT}
. $K/sbin/guest-init
"""

# The boot kit's last step, in the guest's credentials (PID 1 of its PID namespace, root of
# its user namespace, seccomp on, bounding set dropped): its capabilities (effective,
# permitted, bounding), seccomp mode and id map are exactly what the launcher meant, or the
# guest does not boot (its server goes to ERROR): nothing runs with more than that because
# one step failed silently. Then the image's own init, as a system container's (systemd's
# container interface: `container` set; cloud-init's OpenStack detection: product_name, as
# nova-lxd set it), or, for an image without one, the kit's light init.
BOOT = r"""exec 3<&-  # (the launcher's handle on its user namespace)
read -r want_caps want_seccomp want_map < /run/guest/boundary
eff="" prm="" bnd="" sec=""
while read -r key value _; do
  case "$key" in CapEff:) eff=$value ;; CapPrm:) prm=$value ;; CapBnd:) bnd=$value ;;
    Seccomp:) sec=$value ;; esac
done < /proc/self/status
read -r m1 m2 m3 _ < /proc/self/uid_map
if [ "$eff $prm $bnd" != "$want_caps $want_caps $want_caps" ] || [ "$sec" != "$want_seccomp" ] \
    || [ "$m1 $m2 $m3" != "$want_map" ] || [ "$m2" = 0 ]; then
  echo "stackling: guest boundary check failed: CapEff $eff CapPrm $prm CapBnd $bnd" \
    "Seccomp $sec uid_map '$m1 $m2 $m3'; meant $want_caps, seccomp $want_seccomp, '$want_map'"
  exit 86
fi
K=/run/guest/kit
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ -x /sbin/init ] || [ -L /sbin/init ]; then
  exec $K/bin/busybox env -i container=lxc product_name="OpenStack Nova" TERM=linux \
    PATH=$PATH /sbin/init
fi
echo "stackling: the image has no /sbin/init: the light init starts its SSH server"
exec $K/bin/busybox env -i PATH=$K/bin:$PATH HOME=/root $K/bin/busybox sh $K/sbin/light-init
"""

# After boot: user data (as root, as cloud-init runs it) and the SSH server: the kit's
# dropbear, or in the light init (K set) the image's own OpenSSH where it has one.
RUN = r"""#!/bin/sh
export PATH=${K:+$K/bin:}/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
# (an image's own programs first for what is its own: its user data, its OpenSSH's tools)
own=$PATH; [ -n "$K" ] && own=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$K/bin
if [ -s /run/user-data ] && [ "$(head -c 2 /run/user-data)" = "#!" ]; then
  chmod 700 /run/user-data
  echo "cloud-init: running user_data script"
  PATH=$own /run/user-data 2>&1 | sed 's/^/user_data: /'
fi
if [ -n "$K" ] && [ -x /usr/sbin/sshd ]; then
  echo "stackling: starting the image's OpenSSH server (/usr/sbin/sshd)"
  mkdir -p /run/sshd; chmod 755 /run/sshd  # its privilege separation directory
  PATH=$own ssh-keygen -A  # the host keys it lacks (kept after: the root disk is its own)
  echo "$(hostname) login: "
  exec /usr/sbin/sshd -D -e
fi
[ -n "$K" ] && echo "stackling: the image has no /usr/sbin/sshd: starting the kit's dropbear"
mkdir -p /etc/dropbear
echo "$(hostname) login: "
# (the kit's dropbear in an image's root: by the kit's own loader and libraries)
exec ${K:+$K/sbin/kit-run $K}/usr/sbin/dropbear -F -E -R -s -p 22
"""

# udhcpc's event script: the lease's address, routes (RFC 3442 routes replace `router`),
# MTU, DNS servers and search domain; the lease's options are kept in /run/udhcpc.<nic>.
DHCP_EVENT = r"""#!/run/guest/kit/bin/sh
case "$1" in
  deconfig) ip -4 addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    # announce it (gratuitous ARP, as Linux distributions' DHCP clients do): whoever was
    # already asking for this address learns it now, not at its next ARP retry a second on
    arping -U -c 1 -I "$interface" "$ip" >/dev/null 2>&1 &
    [ -n "$mtu" ] && ip link set "$interface" mtu "$mtu"
    if [ -n "$SUBPORT" ]; then  # a trunk sub-port: its address only, routes stay the parent's
      echo "udhcpc: lease of $ip obtained from $serverid on $interface"; exit 0
    fi
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
    env > "/run/udhcpc.$interface"  # the lease
    echo "udhcpc: lease of $ip obtained from $serverid on $interface" ;;
esac
exit 0
"""


# IPv6 on one NIC. "pre" (before the link is up, ipv6-pre): SLAAC is the kernel's, as on any
# Linux guest (accept_ra, autoconf, EUI-64 link-local and global addresses, no temporary
# ones). Then, in the background of the boot, DHCPv6 as the cloud says, the way cloud-init reads
# Nova's network_data.json: the NIC's IPv6 networks' types (ipv6_dhcpv6-stateful or
# ipv6_dhcp: a solicit for its address; ipv6_dhcpv6-stateless: an information request for
# DNS; ipv6_slaac: nothing). With no metadata (an IPv6-only guest) the RA decides: a SLAAC
# address made means an information request, an RA without one a solicit, no RA nothing.
# Each ask is bounded.
IPV6_PRE = r"""# sourced by guest-init and ipv6-up (a function, not a process: no fork at boot)
ipv6_pre() {
  conf=/proc/sys/net/ipv6/conf/$1
  [ -d "$conf" ] || return 0
  echo 0 > "$conf/addr_gen_mode"; echo 0 > "$conf/use_tempaddr"
  echo 1 > "$conf/accept_ra"; echo 1 > "$conf/autoconf"; echo 0 > "$conf/disable_ipv6"
}
"""

IPV6_UP = r"""#!/bin/sh
nic=$1 conf=/proc/sys/net/ipv6/conf/$1
if [ "$2" = pre ]; then . $K/sbin/ipv6-pre; ipv6_pre "$nic"; exit 0; fi
[ -d "$conf" ] && [ -x $K/usr/sbin/dhclient ] || exit 0
mac=$(ip -o link show "$nic" | sed 's/.*ether \([^ ]*\).*/\1/')
data=/run/.network_data.$nic types="" known="" got=""
t=0  # tenths of a second, 20 s in all as before: the RA has had its time by then
[ "$2" = ra ] && t=200  # (the boot found no metadata after its DHCPv4's 20 s: decide now)
# the boot's own ask first (guest-init's, once for every NIC), while it is under way
while [ ! -e /run/.metadata-done ] && [ $t -lt 200 ]; do sleep 0.2; t=$((t + 2)); done
# a NIC's MAC, or a trunk sub-port's (a vlan link's, trunks.py)
if grep -qiE "\"(ethernet|vlan)_mac_address\": \"$mac\"" /run/network_data.json 2>/dev/null; then
  tr '{' '\n' < /run/network_data.json > "$data"; got=1
fi
if [ -z "$got" ]; then  # (an IPv6-only guest's metadata is on its first NIC's link)
  md=169.254.169.254; ip -4 route get $md >/dev/null 2>&1 || md=fe80::a9fe:a9fe%eth0
fi
while [ -z "$got" ] && [ $t -lt 200 ]; do  # a NIC plugged later, or no answer at boot
  printf 'GET /openstack/latest/network_data.json HTTP/1.0\r\nHost: metadata\r\n\r\n' \
    | nc -w 2 "$md" 80 2>/dev/null | tr '{' '\n' > "$data"
  grep -q '"ethernet_mac_address"' "$data" && got=1 || { sleep 1; t=$((t + 10)); }
done
if [ -n "$got" ]; then
  link=$(grep -iE "\"(ethernet|vlan)_mac_address\": \"$mac\"" "$data" \
    | sed -n 's/.*"id": "\([^"]*\)".*/\1/p')
  if [ -n "$link" ]; then
    known=1
    types=$(grep "\"link\": \"$link\"" "$data" | sed -n 's/.*"type": "ipv6_\([^"]*\)".*/\1/p')
  fi
fi
rm -f "$data"
if [ -z "$known" ]; then  # the RA has had its time (the link has been up for 20 s or more)
  if ip -6 addr show dev "$nic" | grep -q 'scope global'; then types=dhcpv6-stateless
  elif ip -6 route show dev "$nic" | grep -v '^fe80:' | grep -v '^ff00:' | grep -q .; then
    types=dhcpv6-stateful  # an RA came (a prefix, a default route) and no SLAAC with it
  fi
fi
[ -n "$types" ] || exit 0  # an IPv4-only or SLAAC NIC: nothing to ask
: > /run/dhclient6.conf
run() {
  i=0  # until the link-local address has passed duplicate address detection
  while [ $i -lt 50 ]; do
    ip -6 addr show dev "$nic" | grep -q 'inet6 fe80' && \
      ! ip -6 addr show dev "$nic" | grep -q tentative && break
    sleep 0.1; i=$((i + 1))
  done
  timeout "$1" ${K:+$K/sbin/kit-run} $K/usr/sbin/dhclient -6 $2 -d -D LL -cf /run/dhclient6.conf \
    -sf $K/sbin/dhcp6-event \
    -lf "/run/dhclient6.$nic.leases" -pf "/run/dhclient6.$nic.pid" "$nic" >/dev/null 2>&1
  [ -e "/run/dhcp6.$nic" ] && cat "/run/dhcp6.$nic"  # what the event script said
}
case " $(echo $types) " in
  *" dhcpv6-stateful "*|*" dhcp "*) run 20 "" || echo "dhclient: no DHCPv6 lease on $nic" ;;
  *" dhcpv6-stateless "*) run 10 -S || echo "dhclient: no DHCPv6 answer on $nic" ;;
esac
"""

# dhclient's event script: the leased address (/128: the prefix is on-link by the RA), the
# DNS servers; then dhclient is stopped (a day's lease outlives these guests' tests).
DHCP6_EVENT = r"""#!/run/guest/kit/bin/sh
PATH=/run/guest/kit/bin:$PATH  # (dhclient gives its script its own PATH: the image's)
case "$reason" in
  BOUND6|RENEW6|REBIND6|REBOOT6|INFORM6)
    if [ -n "$new_ip6_address" ]; then
      ip -6 addr add "$new_ip6_address/${new_ip6_prefixlen:-128}" dev "$interface" 2>/dev/null
      echo "dhclient: lease of $new_ip6_address obtained on $interface" >> "/run/dhcp6.$interface"
    fi
    for s in $new_dhcp6_name_servers; do
      grep -q "^nameserver $s\$" /etc/resolv.conf 2>/dev/null || echo "nameserver $s" >> /etc/resolv.conf
    done
    echo "dhclient: DNS servers ${new_dhcp6_name_servers:-none} on $interface" >> "/run/dhcp6.$interface"
    kill "$PPID" ;;
esac
exit 0
"""


def _libraries(binary: str) -> list[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"(/\S+\.so[.\d]*)", out)


# ping and traceroute as any distribution ships them: with CAP_NET_RAW as a file
# capability (within the guest's bounding set), so the image's user can run them
NET_RAW_TOOLS = ("ping", "ping6", "traceroute", "traceroute6")
CAP_NET_RAW = 13


def _net_raw_tools(bin_dir: Path, applets: list[str]) -> None:
    """A copy of busybox carrying cap_net_raw+ep (a v2 `security.capability`), linked as
    the tools that need a raw socket; without file capabilities they stay plain links."""
    import struct

    copy = bin_dir / "busybox-net"
    shutil.copy2(bin_dir / "busybox", copy)
    try:
        os.setxattr(copy, "security.capability",
                    struct.pack("<IIIII", 0x02000001, 1 << CAP_NET_RAW, 0, 0, 0))
    except OSError:
        copy.unlink()
        return
    for tool in NET_RAW_TOOLS:
        if tool in applets:
            (bin_dir / tool).unlink(missing_ok=True)
            (bin_dir / tool).symlink_to("busybox-net")


def _scripts() -> tuple[tuple[str, str], ...]:
    return (("sbin/guest-init", INIT), ("sbin/light-init", LIGHT_INIT),
            ("sbin/guest-run", RUN), ("sbin/stackling-boot", BOOT),
            (hotplug.WATCH_PATH, hotplug.NIC_WATCH), ("sbin/dhcp-event", DHCP_EVENT),
            ("sbin/ipv6-up", IPV6_UP), ("sbin/ipv6-pre", IPV6_PRE),
            ("sbin/dhcp6-event", DHCP6_EVENT))


def template_dir(base: Path) -> Path:
    """Where the template for this code and these host binaries lives under `base` (the
    cloud's data dir): named by a digest of both, so it is built once and kept across
    restarts (a clean stop removes kernel objects, not this; a start from nothing then only
    boots), and a new version of a script or of a host binary gets a template of its own."""
    digest = hashlib.sha256()
    digest.update(b"kit 4")  # the layout build() makes (runners, /sbin/init, sudo, set-uid)
    for name, (text, mode) in KIT_FILES.items():
        digest.update(f"{name}\0{text}\0{mode}\0".encode())
    for name, text in _scripts():
        digest.update(f"{name}\0{text}\0".encode())
    for src in (BUSYBOX, *BINARIES, *OPTIONAL_BINARIES):
        try:
            st = os.stat(src)
        except OSError:
            continue
        digest.update(f"{src}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return base / f"rootfs-{digest.hexdigest()[:16]}"


def prune(current: Path) -> None:
    """Remove the templates of earlier versions beside `current` (only when no guest runs:
    a running guest's root is a bind mount of its template)."""
    for old in current.parent.glob("rootfs-*"):
        if old != current and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def publish(built: Path, run_dir: Path) -> Path:
    """The template on a tmpfs of its own (`<run dir>/rootfs`), which guests bind read-only:
    the root of a filesystem, so a guest's mount table shows no path of the machine's (a
    bind of a directory of the data dir showed it). Copied once per template and start."""
    import ctypes

    from stackling.dataplane import kernel

    target, marker = run_dir / "rootfs", run_dir / "rootfs.published"
    if marker.exists() and marker.read_text() == built.name and os.path.ismount(target):
        return target
    target.mkdir(parents=True, exist_ok=True)
    kernel.unmount(str(target))  # (running guests keep the one they bound)
    size = sum(p.lstat().st_size for p in built.rglob("*")) * 2 + (16 << 20)
    libc = ctypes.CDLL(None, use_errno=True)
    # nosuid, nodev (MS_NOSUID | MS_NODEV): the set-user-ID binaries below are no user of
    # the machine's way to its root; a cirros guest's root is an overlay, a mount of its own
    if libc.mount(b"stackling-rootfs", str(target).encode(), b"tmpfs", 2 | 4,
                  f"size={size},mode=755".encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount tmpfs {target}: {os.strerror(err)}")
    subprocess.run(["cp", "-a", f"{built}/.", str(target)], check=True)
    for name in SETUID:
        if (target / name).is_file():
            (target / name).chmod(0o4755)
    (target / ".complete").unlink(missing_ok=True)
    marker.write_text(built.name)
    return target


def build(root: Path) -> Path:
    """Build the template once (idempotent: an existing complete template is kept)."""
    done = root / ".complete"
    if done.exists():
        return root
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "mnt", *WRITABLE):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, tmp / "bin/busybox")
    applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        link = tmp / "bin" / applet
        if applet not in ("busybox", "setpriv") and not link.exists():
            link.symlink_to("busybox")
    _net_raw_tools(tmp / "bin", applets)
    for src, dst in BINARIES.items():
        shutil.copy2(src, tmp / dst)
        for lib in _libraries(src):
            target = tmp / lib.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copy2(os.path.realpath(lib), target)
    for src, dst in OPTIONAL_BINARIES.items():
        if os.path.exists(src) and not (tmp / dst).exists():
            (tmp / dst).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tmp / dst)
            (tmp / dst).chmod(0o755)  # (set-user-ID only where publish() makes it so)
            for lib in _libraries(src):
                target = tmp / lib.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    shutil.copy2(os.path.realpath(lib), target)
    # the kit's binaries run by its own loader and libraries, whatever the image's (or none):
    # setpriv before any image's init (a script the launcher's busybox sh reads), and in a
    # light init's guest dropbear and dhclient (kit-run <binary> <args>)
    linked = [src for src in (*BINARIES, *OPTIONAL_BINARIES) if os.path.exists(src)]
    libraries = [lib for src in linked for lib in _libraries(src)]
    loader = next(lib for lib in libraries if "/ld-linux" in lib)
    libdirs = ":".join(KIT + d for d in sorted({os.path.dirname(lib) for lib in libraries}))
    run = f"exec {KIT}{loader} --library-path {libdirs}"
    (tmp / "sbin/setpriv").write_text(f'{run} {KIT}/usr/bin/setpriv "$@"\n')
    (tmp / "sbin/kit-run").write_text(f'#!{KIT}/bin/sh\n{run} "$@"\n')
    (tmp / "sbin/kit-run").chmod(0o755)
    if (tmp / "usr/bin/sudo").exists():
        for name, (text, mode) in KIT_FILES.items():
            (tmp / name).write_text(text)
            (tmp / name).chmod(mode)
    (tmp / "sbin/init").symlink_to("guest-init")
    (tmp / "tmp").chmod(0o1777)
    version = subprocess.run([BUSYBOX], capture_output=True, text=True).stdout.split()[1]
    for name, text in _scripts():
        (tmp / name).write_text(text.replace("@BUSYBOX_VERSION@", version))
        (tmp / name).chmod(0o755)
    (tmp / ".complete").touch()
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root
