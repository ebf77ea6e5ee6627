"""The compute microversions stackling serves, as data (append only; the last row is the max).

Every behaviour change between 2.1 and the max is reproduced; see views.py and
schemas.py for where each row shows.
"""

from __future__ import annotations

from typing import TypeVar

from stackling.common.microversion import Version, VersionSpec

HISTORY = (
    ("2.1", "base API"),
    ("2.2", "keypairs: type field; x509 keypairs"),
    ("2.3", "servers: more OS-EXT-SRV-ATTR fields (admin); volumes_attached delete_on_termination"),
    ("2.4", "fixed IP reserve/unreserve (not served)"),
    ("2.5", "os-migrateLive: block_migration"),
    ("2.6", "POST /servers/{id}/remote-consoles (vnc; other protocols 501); "
            "the os-get*Console actions removed"),
    ("2.7", "flavor access checks (private flavors)"),
    ("2.8", "remote-consoles: mks protocol (501: no such console here)"),
    ("2.9", "servers: locked"),
    ("2.10", "keypairs: user_id for admins"),
    ("2.11", "os-services: forced_down"),
    ("2.12", "os-virtual-interfaces net_id (not served)"),
    ("2.13", "server groups: project_id/user_id (not served)"),
    ("2.14", "evacuate: onSharedStorage removed, no adminPass in the response"),
    ("2.15", "server groups: soft policies (not served)"),
    ("2.16", "servers: host_status (admin)"),
    ("2.17", "trigger_crash_dump action"),
    ("2.18", "project id optional in URLs"),
    ("2.19", "servers: description"),
    ("2.20", "volume attach on shelved servers (not served)"),
    ("2.21", "os-instance-actions: actions of deleted servers stay readable"),
    ("2.22", "POST /servers/{id}/migrations/{id}/action force_complete (400: never running)"),
    ("2.23", "os-migrations: migration_type; GET /servers/{id}/migrations[/{id}]"),
    ("2.24", "DELETE /servers/{id}/migrations/{id} (400: never running)"),
    ("2.25", "os-migrateLive: block_migration 'auto', disk_over_commit removed"),
    ("2.26", "servers: tags"),
    ("2.27", "OpenStack-API-Version header"),
    ("2.28", "hypervisors: cpu_info as an object"),
    ("2.29", "evacuate: force"),
    ("2.30", "os-migrateLive: force"),
    ("2.31", "serial console URLs (not served)"),
    ("2.32", "servers create: tag on networks"),
    ("2.33", "hypervisors: paging"),
    ("2.34", "os-migrateLive: a failed pre-check is recorded (202), not a 400"),
    ("2.35", "keypairs: paging"),
    ("2.36", "proxy APIs removed: /images 404; limits without network quotas"),
    ("2.37", "servers create: networks required, accepts 'auto' | 'none'"),
    ("2.38", "servers list: an unknown status is a 400"),
    ("2.39", "limits: maxImageMeta removed"),
    ("2.40", "simple tenant usage paging (not served)"),
    ("2.41", "aggregates: uuid"),
    ("2.42", "servers create: tag on networks allowed again"),
    ("2.43", "os-hosts removed (never served)"),
    ("2.44", "network actions and os-virtual-interfaces removed (never served)"),
    ("2.45", "createImage returns {image_id}, no Location (createBackup not served)"),
    ("2.46", "request id header documented (always sent)"),
    ("2.47", "servers: the flavor embedded in the server body"),
    ("2.48", "server diagnostics: the standard format"),
    ("2.49", "os-interface attach: tag"),
    ("2.50", "quota classes: server groups quotas added (not served), network quotas dropped"),
    ("2.51", "os-instance-actions: events shown to non-admins (without traceback)"),
    ("2.52", "servers create: tags"),
    ("2.53", "os-services and os-hypervisors: uuid ids, PUT/DELETE /os-services/{uuid}, "
             "hypervisor_hostname_pattern and with_servers"),
    ("2.54", "rebuild: key_name"),
    ("2.55", "flavors: description; PUT /flavors/{id}"),
    ("2.56", "migrate: host"),
    ("2.57", "servers create: personality removed; limits without maxPersonality*"),
    ("2.58", "os-instance-actions: updated_at, limit/marker paging, changes-since"),
    ("2.59", "os-migrations: uuid, limit/marker paging, changes-since"),
    ("2.60", "multiattach volumes (not served)"),
    ("2.61", "flavors: extra_specs in the flavor body"),
    ("2.62", "os-instance-actions events: hostId (and host for admins)"),
    ("2.63", "servers: trusted_image_certificates on create and rebuild, shown (null: none)"),
    ("2.64", "server groups: policy and rules (anti-affinity max_server_per_host) replace "
             "policies and metadata"),
    ("2.65", "abort of a queued/preparing live migration (none ever is: migrations finish "
             "in their request)"),
    ("2.66", "changes-before filter on servers, os-instance-actions and os-migrations"),
    ("2.67", "servers create: block_device_mapping_v2 volume_type (boot from volume is not "
             "served)"),
    ("2.68", "os-migrateLive and evacuate: force removed"),
    ("2.69", "minimal constructs for down cells (one cell: never down)"),
    ("2.70", "os-interface: tag in the responses"),
    ("2.71", "servers: server_groups in show, update and rebuild"),
    ("2.72", "servers create: ports with a resource request allowed (refused before)"),
    ("2.73", "lock: locked_reason; servers: locked_reason, the locked filter and sort key"),
    ("2.74", "servers create: host and/or hypervisor_hostname (admin; filters still run)"),
    ("2.75", "unknown query parameters are a 400; update/rebuild answer the whole server; "
             "flavor swap 0; hypervisors servers always listed with with_servers"),
    ("2.76", "os-server-external-events power-update (not served)"),
    ("2.77", "unshelve: availability_zone"),
    ("2.78", "GET /servers/{id}/topology (no NUMA here: no nodes)"),
    ("2.79", "volume attachments: delete_on_termination (not served)"),
    ("2.80", "migrations: user_id and project_id, and filters by them on os-migrations"),
    ("2.81", "POST /os-aggregates/{id}/images (no disks: nothing to cache)"),
    ("2.82", "os-server-external-events accelerator-request-bound (not served)"),
    ("2.83", "servers list: more filters for non-admins"),
    ("2.84", "os-instance-actions events: details (admin)"),
    ("2.85", "PUT volume attachment delete_on_termination (not served)"),
    ("2.86", "flavor extra specs: the known ones validated"),
    ("2.87", "rescue of volume-backed servers (boot from volume is not served)"),
    ("2.88", "hypervisors: statistics fields dropped, uptime in the body; /statistics and "
             "/{id}/uptime removed"),
    ("2.89", "volume attachments: attachment_id and bdm_uuid (not served)"),
    ("2.90", "servers: hostname on create, update and rebuild, shown to everyone"),
    ("2.91", "unshelve: host (admin), and a null availability_zone unpins"),
    ("2.92", "keypairs: import only (public_key required); '@' and '.' in names"),
    ("2.93", "rebuild of volume-backed servers (boot from volume is not served)"),
    ("2.94", "servers: hostname may be an FQDN"),
    ("2.95", "evacuate: the server is stopped at the destination"),
    ("2.96", "servers: pinned_availability_zone"),
    ("2.97", "/servers/{id}/shares (no Manila, no virtiofs hosts: none ever attached)"),
    ("2.98", "servers: the image's properties (as at boot or rebuild) under image.properties"),
    ("2.99", "remote consoles: spice-direct (501: no spice here); os-console-auth-tokens: "
             "tls_port, unknown query parameters a 400"),
    ("2.100", "servers: scheduler_hints (as given at boot) in show, detail, update, rebuild"),
    ("2.101", "volume attach answers 202 (os-volume_attachments is not served)"),
    ("2.102", "flavors: name filter, rxtx_factor and OS-FLV-DISABLED:disabled gone; unknown "
              "query parameters a 400 on every API"),
    ("2.103", "/os-volumes_boot removed (never served)"),
    ("2.104", "PUT /servers/{id}: pinned_availability_zone (unpin with null, re-pin to the "
              "current zone)"),
)

MIN = Version.parse(HISTORY[0][0])
MAX = Version.parse(HISTORY[-1][0])
SPEC = VersionSpec("compute", MIN, MAX, legacy_header="x-openstack-nova-api-version")

T = TypeVar("T")


def pick(version: Version, table: dict[str, T]) -> T:
    """The entry of `table` ({"2.1": a, "2.37": b}) for the highest key <= version."""
    best: T | None = None
    best_key = Version(0, 0)
    for key, value in table.items():
        k = Version.parse(key)
        if k <= version and k >= best_key:
            best, best_key = value, k
    if best is None:
        raise KeyError(str(version))
    return best
