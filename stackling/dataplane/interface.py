"""The dataplane's in-process interface: start/stop in a serving process, the console log
compute serves, and what `stackling dataplane down` and `stackling outside` need."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

_LOOP: Any = None
_CONSOLE_DIR: Path | None = None
TOOLS = ("nsenter", "unshare", "dnsmasq", "nft", "dropbear", "busybox", "setpriv")


def unavailable_reason() -> str | None:
    """Why this machine cannot run the netns driver, or None when it can."""
    if os.geteuid() != 0:
        return "not root"
    missing = [t for t in TOOLS if shutil.which(t) is None
               and not Path(f"/usr/sbin/{t}").exists()]
    if missing:
        return f"missing {', '.join(missing)} (make dataplane-deps)"
    try:
        import pyroute2  # noqa: F401
    except ImportError:
        return "pyroute2 is not installed"
    if not Path("/proc/self/ns/net").exists():
        return "no network namespaces"
    if not Path("/proc/self/ns/user").exists():
        return "no user namespaces (guests run in one of their own)"
    if not Path("/proc/sys/net/bridge/bridge-nf-call-iptables").exists():
        return "no br_netfilter (security groups are filtered on the hosts' bridges)"
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, OSError):
        return "pyseccomp (libseccomp) is not installed"
    from stackling.dataplane.cgroups import Cgroups

    return Cgroups("").available()


def start(settings: Any, ready: threading.Event | None = None) -> None:
    """Run the dataplane loop in this process (it programs the kernel while it holds the
    cloud's lease), its first pass once `ready` is set; every process serves console logs."""
    global _LOOP, _CONSOLE_DIR
    _CONSOLE_DIR = settings.data_dir.resolve() / "dataplane" / "console"
    from stackling.compute import interface as compute

    compute.register_console_log(console_log)
    compute.register_snapshot_capture()  # (its lease holder writes snapshots: snapshots.py)
    if _LOOP is None:
        from stackling.dataplane.service import DataplaneLoop

        _LOOP = DataplaneLoop(settings, ready)
        _LOOP.start()


def stop() -> None:
    global _LOOP
    if _LOOP is not None:
        _LOOP.stop()
        _LOOP = None


def console_log(server_id: str) -> str | None:
    """The guest's console output, or None when this cloud runs no guests."""
    if _CONSOLE_DIR is None:
        return None
    try:
        return (_CONSOLE_DIR / f"{server_id}.log").read_text(errors="replace")
    except OSError:
        return None


def down(settings: Any) -> list[str]:
    """Remove every kernel object and process of the cloud; the namespaces that were there."""
    from stackling.common.db import Database
    from stackling.dataplane import kernel
    from stackling.dataplane.names import cloud_prefix
    from stackling.dataplane.reconciler import Reconciler

    prefix = cloud_prefix(settings.db_url)
    before = kernel.list_namespaces(prefix)
    database = Database(settings.db_url)
    try:
        Reconciler(database, prefix, settings.data_dir.resolve()).teardown()
    finally:
        database.dispose()
    return before


def outside_namespace(settings: Any) -> str:
    from stackling.dataplane.names import Names, cloud_prefix

    return Names(cloud_prefix(settings.db_url)).outside


def wire_applies(settings: Any) -> bool:
    """Whether the audit reads this cloud's kernel: it runs the netns driver, or objects
    with its prefix are on the machine (they should not be, with the driver off)."""
    if settings.dataplane.driver == "netns":
        return True
    from stackling.dataplane.names import cloud_prefix

    prefix = cloud_prefix(settings.db_url) + "-"
    return Path("/run/netns").is_dir() and any(n.startswith(prefix)
                                               for n in os.listdir("/run/netns"))


def audit_wire(db: Any, settings: Any) -> list[tuple[str, str, str, str, str]]:
    """Every difference between the kernel objects the desired state asks for and those
    with the cloud's prefix on the machine: (check, resource, expected, actual, message).
    With the driver off, nothing is desired."""
    from stackling.dataplane import desired, inventory
    from stackling.dataplane.names import Names, cloud_prefix
    from stackling.network import interface as network

    names = Names(cloud_prefix(settings.db_url))
    if settings.dataplane.driver == "netns":
        want = inventory.expected(desired.read(db), names, network.trunks_all(db))
    else:
        want = inventory.Inventory()
    from stackling.block_storage import interface as block_storage

    have = inventory.observed(names, Path("/run/stackling") / names.prefix,
                              block_storage.volume_path(settings, "-").parent)
    return [("dataplane.wire", f"{d.kind} {d.name}", d.expected, d.actual, d.message)
            for d in inventory.compare(want, have)]
