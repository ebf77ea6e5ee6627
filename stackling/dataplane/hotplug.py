"""NIC hot-plug into a running guest, as a hypervisor does it: the dataplane plugs the veth
into the guest's namespace, then notifies the guest (a VM gets an ACPI event; here its
`nic-watch` process gets SIGURG), and the guest's side brings each new `ethN` (or a trunk
sub-port's `ethN.<vid>`, trunks.py) up and takes its address by DHCP. An unplug needs
nothing from the guest: its link is gone.

SIGURG because its default action is to be ignored: a notification that reaches the guest
before its watcher has set its trap is lost, not fatal (the watcher scans when it starts).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

SIGNAL = signal.SIGURG
WATCH_PATH = "sbin/nic-watch"
# Runs as root with only net_admin, net_raw and net_bind_service (udhcpc's raw socket and
# port 68, dhclient's 546): guest-init starts it (rootfs.py) before it drops capabilities. A NIC
# plugged later takes its address only (dhcp-event's SUBPORT, as a trunk's sub-port): the
# routes and resolv.conf stay eth0's, as a second NIC's DHCP client leaves them on most
# images. eth0 itself plugged again (its link deleted by hand, then re-plugged by the
# reconciler) takes its routes and resolver again too: they went with the old link.
# K is the kit's place in a light init's guest (rootfs.INIT), empty in cirros's.
NIC_WATCH = r"""#!/bin/sh
export PATH=${K:+$K/bin:}/bin:/sbin:/usr/bin:/usr/sbin
links() { ip -o link | sed -n 's/^\([0-9]*\): \(eth[0-9.]*\)[:@].*/\1:\2/p'; }
seen=""  # the first scan only learns the boot's NICs (guest-init's)
scan() {
  now=" "
  for l in $(links); do
    now="$now$l "
    case "$seen" in "") continue ;; *" $l "*) continue ;; esac
    nic=${l#*:}
    echo "stackling: NIC $nic hot-plugged"
    [ -x $K/sbin/ipv6-up ] && sh $K/sbin/ipv6-up "$nic" pre
    ip link set "$nic" up
    [ -x $K/sbin/ipv6-up ] && sh $K/sbin/ipv6-up "$nic" &
    sub=1; [ "$nic" = eth0 ] && sub=""  # eth0 plugged again: its routes and resolver too
    SUBPORT=$sub udhcpc -i "$nic" -f -q -n -t 20 -T 1 -A 1 -O staticroutes -O mtu -S \
      -s $K/sbin/dhcp-event -x hostname:"$(hostname)" 2>&1 || echo "udhcpc: no lease on $nic" &
  done
  seen=$now  # by index and name: a NIC plugged again under an old name is new
}
trap scan URG
scan
# the trap runs when `wait` returns; $! is then scan's last job, so the sleep's pid is kept
while :; do sleep 2147483647 & s=$!; wait $s; kill $s 2>/dev/null; done
"""


def notify(pids: list[int]) -> int:
    """Signal the guest's watcher among `pids` (the guest's processes); how many were."""
    marker = ("/" + WATCH_PATH).encode()
    sent = 0
    for pid in pids:
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, SIGNAL)
                sent += 1
        except (OSError, ProcessLookupError):
            continue
    return sent
