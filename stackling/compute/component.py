"""The compute service as a stackling component: routes, Nova's default policies,
bootstrap (flavors, hosts, their placement providers) and the build workers."""

from __future__ import annotations

from typing import Any

from stackling.compute import api, build, flavors, hosts, segment_aggregates, transitions
from stackling.compute.api import admin_extras as _extra_api
from stackling.compute.api import proxies
from stackling.compute.api import quotas as quota_api
from stackling.compute.api import server_actions as action_api
from stackling.compute.api import server_groups as server_group_api
from stackling.compute.api import server_password as _password_api
from stackling.compute.api import server_shares as _shares_api
from stackling.compute.api import usage as usage_api
from stackling.compute.api import volume_attachments as _volume_api
from stackling.observability import metrics
from stackling.runtime import CatalogEntry, Component

ADMIN = "rule:context_is_admin"
READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"
OWNER_USER = "rule:context_is_admin or user_id:%(user_id)s"

POLICIES = {
    "os_compute_api:servers:index": READER,
    "os_compute_api:servers:detail": READER,
    "os_compute_api:servers:show": READER,
    "os_compute_api:servers:create": MEMBER,
    "os_compute_api:servers:create:attach_network": MEMBER,
    "os_compute_api:servers:create:forced_host": ADMIN,
    "os_compute_api:servers:create:zero_disk_flavor": ADMIN,  # also rebuild's and resize's
    "os_compute_api:servers:create:trusted_certs": MEMBER,  # 2.63
    "os_compute_api:servers:rebuild:trusted_certs": MEMBER,  # 2.63
    "compute:servers:create:requested_destination": ADMIN,  # 2.74 (Nova's name, no prefix)
    "compute:aggregates:images": ADMIN,  # 2.81
    "os_compute_api:os-instance-actions:events:details": ADMIN,  # 2.84
    "os_compute_api:servers:update": MEMBER,
    "os_compute_api:servers:delete": MEMBER,
    "os_compute_api:servers:start": MEMBER,
    "os_compute_api:servers:stop": MEMBER,
    "os_compute_api:servers:reboot": MEMBER,
    "os_compute_api:os-lock-server:lock": MEMBER,
    "os_compute_api:os-lock-server:unlock": MEMBER,
    "os_compute_api:server-metadata:index": READER,
    "os_compute_api:server-metadata:show": READER,
    **{f"os_compute_api:server-metadata:{a}": MEMBER
       for a in ("create", "update", "update_all", "delete")},
    "os_compute_api:os-instance-actions:list": READER,
    "os_compute_api:os-instance-actions:show": READER,
    "os_compute_api:os-instance-actions:events": ADMIN,
    "os_compute_api:os-server-tags:index": READER,
    "os_compute_api:os-server-tags:show": READER,
    **{f"os_compute_api:os-server-tags:{a}": MEMBER
       for a in ("update", "update_all", "delete", "delete_all")},
    "os_compute_api:servers:index:get_all_tenants": ADMIN,
    "os_compute_api:servers:detail:get_all_tenants": ADMIN,
    "os_compute_api:servers:allow_all_filters": ADMIN,
    "os_compute_api:servers:show:host_status": ADMIN,
    "os_compute_api:servers:show:flavor-extra-specs": READER,
    "os_compute_api:os-extended-server-attributes": ADMIN,
    "os_compute_api:ips:index": READER,
    "os_compute_api:ips:show": READER,
    "os_compute_api:os-attach-interfaces:list": READER,
    "os_compute_api:os-attach-interfaces:show": READER,
    "os_compute_api:os-attach-interfaces:create": MEMBER,
    "os_compute_api:os-attach-interfaces:delete": MEMBER,
    "os_compute_api:os-flavor-manage:create": ADMIN,
    "os_compute_api:os-flavor-manage:delete": ADMIN,
    "os_compute_api:os-flavor-manage:update": ADMIN,
    "os_compute_api:os-flavor-access": ADMIN,
    "os_compute_api:os-flavor-access:add_tenant_access": ADMIN,
    "os_compute_api:os-flavor-access:remove_tenant_access": ADMIN,
    "os_compute_api:os-flavor-extra-specs:index": READER,
    "os_compute_api:os-flavor-extra-specs:show": READER,
    "os_compute_api:os-flavor-extra-specs:create": ADMIN,
    "os_compute_api:os-flavor-extra-specs:update": ADMIN,
    "os_compute_api:os-flavor-extra-specs:delete": ADMIN,
    "os_compute_api:os-keypairs:index": OWNER_USER,
    "os_compute_api:os-keypairs:show": OWNER_USER,
    "os_compute_api:os-keypairs:create": OWNER_USER,
    "os_compute_api:os-keypairs:delete": OWNER_USER,
    "os_compute_api:os-services:list": ADMIN,
    "os_compute_api:os-services:update": ADMIN,
    "os_compute_api:os-services:delete": ADMIN,
    **{f"os_compute_api:os-hypervisors:{a}": ADMIN
       for a in ("list", "list-detail", "show", "statistics", "search", "servers", "uptime")},
    **{f"os_compute_api:os-aggregates:{a}": ADMIN
       for a in ("index", "create", "show", "update", "delete", "add_host", "remove_host",
                 "set_metadata")},
    "os_compute_api:os-availability-zone:list": "@",
    "os_compute_api:os-availability-zone:detail": ADMIN,
    "os_compute_api:limits": "@",
    **proxies.POLICIES,
    **usage_api.POLICIES,
    **quota_api.POLICIES,
    **server_group_api.POLICIES,
    **action_api.POLICIES,
    **_extra_api.POLICIES,
    **_password_api.POLICIES,
    **_shares_api.POLICIES,
    **_volume_api.POLICIES,
}


def _start(runtime: Any) -> None:
    hosts.start_hosts(runtime)
    worker = build.BuildWorker(runtime, runtime.settings.compute.build_workers)
    runtime.state["compute.builder"] = worker
    worker.start()
    metrics.PENDING_WORK["server_builds"] = build.pending_count
    finisher = transitions.TransitionWorker(runtime)
    runtime.state["compute.transitions"] = finisher
    finisher.start()


def _stop(runtime: Any) -> None:
    worker = runtime.state.pop("compute.builder", None)
    if worker is not None:
        worker.stop()
    finisher = runtime.state.pop("compute.transitions", None)
    if finisher is not None:
        finisher.stop()


# Network asks compute for segments' host aggregates and servers' projects through the
# functions compute registers here (network imports nothing of compute).
segment_aggregates.register()

COMPONENT = Component(
    name="compute",
    build=api.build,
    policies=POLICIES,
    catalog=CatalogEntry(type="compute", name="nova", path="/compute/v2.1"),
    bootstrap=[("flavors", flavors.bootstrap_flavors)],
    start=_start,
    stop=_stop,
)
