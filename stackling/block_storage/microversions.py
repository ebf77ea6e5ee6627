"""Cinder's v3 microversions, as data (cinder/api/microversions.py and
rest_api_version_history.rst; append only, the last row is the max).

Each row says what the version changes and how stackling serves it: built, or why there
is nothing to simulate (one backend, no clusters, no replication)."""

from __future__ import annotations

from stackling.common.microversion import Version, VersionSpec

HISTORY = (
    ("3.0", "base API (v2's API under v3)"),
    ("3.1", "os-volume_upload_image: visibility and protected"),
    ("3.2", "volumes list: bootable filter"),
    ("3.3", "user messages API (served empty: no asynchronous failure leaves a message)"),
    ("3.4", "volumes list: glance_metadata filter"),
    ("3.5", "messages: pagination (empty list)"),
    ("3.6", "consistency groups update with blank fields (no consistency groups: nothing)"),
    ("3.7", "clusters API (one backend, no clusters: admin-only empty list)"),
    ("3.8", "manageable volumes/snapshots list (manage/unmanage not served: see README)"),
    ("3.9", "backups: PUT /backups/{id} (name, description)"),
    ("3.10", "volumes list: group_id filter"),
    ("3.11", "group types and group specs"),
    ("3.12", "GET /volumes/summary"),
    ("3.13", "generic volume groups (volume create: group_id)"),
    ("3.14", "group snapshots; groups: group_snapshot_id, source_group_id"),
    ("3.15", "ETags on volume metadata (If-Match; not checked)"),
    ("3.16", "os-migrate_volume to a cluster (one backend: nothing to migrate to)"),
    ("3.17", "manageable lists by cluster (not served, as 3.8)"),
    ("3.18", "backups: os-backup-project-attr:project_id (admin)"),
    ("3.19", "group snapshot reset_status (admin)"),
    ("3.20", "group reset_status (admin)"),
    ("3.21", "volumes detail: provider_id (admin; null on the file backend)"),
    ("3.22", "snapshots list: metadata filter"),
    ("3.23", "DELETE /volumes/{id}?force=true"),
    ("3.24", "workers cleanup (nothing to clean: work is claimed with leases)"),
    ("3.25", "groups show: list_volume=True lists its volumes"),
    ("3.26", "replication failover by cluster (no replication)"),
    ("3.27", "the attachments API"),
    ("3.28", "scheduler-stats pools filter"),
    ("3.29", "group snapshots paging (sorted, one page)"),
    ("3.30", "snapshots: sort by name"),
    ("3.31", "filters from resource_filters on every list"),
    ("3.32", "services log levels (nothing to set: one process)"),
    ("3.33", "GET /resource_filters"),
    ("3.34", "like filters (name~, status~, description~)"),
    ("3.35", "scheduler-stats pools: volume_type filter"),
    ("3.36", "volumes summary: metadata"),
    ("3.37", "backups: sort by name"),
    ("3.38", "group replication (no replication)"),
    ("3.39", "limits: project_id for admins"),
    ("3.40", "os-revert (revert a volume to its latest snapshot)"),
    ("3.41", "snapshots: user_id"),
    ("3.42", "os-extend of an in-use volume"),
    ("3.43", "backups: metadata"),
    ("3.44", "attachments: os-complete"),
    ("3.45", "with_count on volumes, snapshots and backups lists"),
    ("3.46", "a volume from a Nova snapshot image of a volume-backed server (its "
             "block_device_mapping's snapshot): nothing to simulate until compute makes "
             "such images; an imageRef is read as any image's"),
    ("3.47", "volume create: backup_id"),
    ("3.48", "volumes: shared_targets and service_uuid"),
    ("3.49", "services: backend_state (up)"),
    ("3.50", "multiattach volumes (volume create: multiattach)"),
    ("3.51", "backups: availability_zone on create"),
    ("3.52", "volume types list: extra_specs filter (admin)"),
    ("3.53", "request bodies validated by schema (additional properties refused)"),
    ("3.54", "attachments create: mode"),
    ("3.55", "transfers: no_snapshots (the volume-transfers API)"),
    ("3.56", "backups: user_id"),
    ("3.57", "transfers: destination_project_id, source_project_id, accepted"),
    ("3.58", "groups and group snapshots: project_id"),
    ("3.59", "transfers: paging and sorting"),
    ("3.60", "volumes list: created_at/updated_at comparisons (gt, gte, lt, lte, eq, neq)"),
    ("3.61", "volumes detail: cluster_name (admin; null)"),
    ("3.62", "default types API (/default-types)"),
    ("3.63", "volumes detail: volume_type_id"),
    ("3.64", "volumes detail: encryption_key_id (never: no encrypted types)"),
    ("3.65", "volumes and snapshots: consumes_quota (always true: no temporary volumes "
             "here, so the use_quota filter has nothing to select)"),
    ("3.66", "snapshots of in-use volumes without force"),
    ("3.67", "project id optional in URLs (served from 3.0, as upstream routes both)"),
    ("3.68", "os-reimage"),
    ("3.69", "shared_targets may be null"),
    ("3.70", "transfers of encrypted volumes (none here)"),
    ("3.71", "os-extend_volume_completion (admin; Nova's report: the file backend's "
             "extend completes by itself)"),
)

SPEC = VersionSpec(service_type="volume", min_version=Version.parse(HISTORY[0][0]),
                   max_version=Version.parse(HISTORY[-1][0]))
MIN, MAX = HISTORY[0][0], HISTORY[-1][0]
