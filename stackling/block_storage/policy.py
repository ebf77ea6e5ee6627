"""Cinder's default policies (cinder/policies/*.py, the current defaults; the system
scope parts are left out: stackling's tokens are project scoped). `admin_api`,
`context_is_admin` and `admin_or_owner` are the shared base rules (common/policy.py):
Cinder's `is_admin:True or (role:admin and is_admin_project:True)` is an admin's token."""

from __future__ import annotations

READER = "rule:xena_system_admin_or_project_reader"
MEMBER = "rule:xena_system_admin_or_project_member"
ADMIN = "rule:admin_api"
ANY_ADMIN = "rule:system_or_domain_or_project_admin"

BASE = {
    "xena_system_admin_or_project_reader": "(role:admin) or (role:reader and "
                                           "project_id:%(project_id)s)",
    "xena_system_admin_or_project_member": "(role:admin) or (role:member and "
                                           "project_id:%(project_id)s)",
    # Cinder's system_or_domain_or_project_admin: stackling has no system scope and its
    # admin (admin_api) is the cloud's, so a system admin's rights are any admin's.
    "system_or_domain_or_project_admin": "role:admin",
}

_MEMBER_ACTIONS = (
    "volume:create", "volume:create_from_image", "volume:update", "volume:delete",
    "volume:multiattach", "volume:extend", "volume:extend_attached_volume",
    "volume:revert_to_snapshot", "volume:retype", "volume:update_readonly_flag",
    "volume:reimage", "volume:reimage_reserved",
    "volume_extension:volume_actions:upload_image",
    "volume_extension:volume_actions:initialize_connection",
    "volume_extension:volume_actions:terminate_connection",
    "volume_extension:volume_actions:roll_detaching",
    "volume_extension:volume_actions:reserve", "volume_extension:volume_actions:unreserve",
    "volume_extension:volume_actions:begin_detaching",
    "volume_extension:volume_actions:attach", "volume_extension:volume_actions:detach",
    "volume:create_volume_metadata", "volume:update_volume_metadata",
    "volume:delete_volume_metadata", "volume_extension:volume_image_metadata:set",
    "volume_extension:volume_image_metadata:remove",
    "volume:create_snapshot", "volume:update_snapshot", "volume:delete_snapshot",
    "volume:update_snapshot_metadata", "volume:delete_snapshot_metadata",
    "snapshot_extension:snapshot_actions:update_snapshot_status",
    "backup:create", "backup:update", "backup:delete", "backup:restore",
    "volume:attachment_create", "volume:attachment_update", "volume:attachment_delete",
    "volume:attachment_complete", "volume:multiattach_bootable_volume",
    "volume:create_transfer", "volume:accept_transfer", "volume:delete_transfer",
    "volume_extension:volume_type_access",
    "group:create", "group:update", "group:delete", "message:delete",
    "group:enable_replication", "group:disable_replication", "group:failover_replication",
    "group:list_replication_targets", "group:create_group_snapshot",
    "group:delete_group_snapshot", "group:update_group_snapshot",
)
_READER_ACTIONS = (
    "volume:get", "volume:get_all", "volume_extension:volume_tenant_attribute",
    "volume_extension:volume_encryption_metadata", "volume:get_volume_metadata",
    "volume_extension:volume_image_metadata:show", "volume:get_all_snapshots",
    "volume:get_snapshot", "volume_extension:extended_snapshot_attributes",
    "volume:get_snapshot_metadata", "backup:get_all", "backup:get",
    "volume:get_all_transfers", "volume:get_transfer", "limits_extension:used_limits",
    "volume_extension:quotas:show", "volume_extension:type_get",
    "volume_extension:type_get_all", "volume_extension:access_types_extra_specs",
    "volume_extension:types_extra_specs:index", "volume_extension:types_extra_specs:show",
    "group:get_all", "group:get", "message:get", "message:get_all",
    "group:get_all_group_snapshots", "group:get_group_snapshot",
)
_ADMIN_ACTIONS = (
    "volume:force_delete", "volume_extension:volume_host_attribute",
    "volume_extension:volume_mig_status_attribute",
    "volume_extension:volume_admin_actions:reset_status",
    "volume_extension:volume_admin_actions:force_delete",
    "volume_extension:volume_admin_actions:force_detach",
    "volume_extension:volume_admin_actions:migrate_volume",
    "volume_extension:volume_admin_actions:migrate_volume_completion",
    "volume:extend_volume_completion", "volume_extension:volume_actions:upload_public",
    "volume_extension:snapshot_admin_actions:reset_status",
    "volume_extension:snapshot_admin_actions:force_delete",
    "volume_extension:backup_admin_actions:reset_status",
    "volume_extension:backup_admin_actions:force_delete",
    "backup:backup_project_attribute", "backup:backup-import", "backup:export-import",
    "volume_extension:types_manage", "volume_extension:type_create",
    "volume_extension:type_update", "volume_extension:type_delete",
    "volume_extension:access_types_qos_specs_id",
    "volume_extension:types_extra_specs:create", "volume_extension:types_extra_specs:update",
    "volume_extension:types_extra_specs:delete",
    "volume_extension:types_extra_specs:read_sensitive",
    "volume_extension:volume_type_access:addProjectAccess",
    "volume_extension:volume_type_access:removeProjectAccess",
    "volume_extension:volume_type_access:get_all_for_type",
    "volume_extension:volume_type_encryption",
    "volume_extension:qos_specs_manage:get_all", "volume_extension:qos_specs_manage:get",
    "volume_extension:qos_specs_manage:create", "volume_extension:qos_specs_manage:update",
    "volume_extension:qos_specs_manage:delete",
    "volume_extension:quotas:update", "volume_extension:quotas:delete",
    "volume_extension:quota_classes", "volume_extension:quota_classes:get",
    "volume_extension:quota_classes:update",
    "volume_extension:services:index", "volume_extension:services:update",
    "volume_extension:capabilities", "scheduler_extension:scheduler_stats:get_pools",
    "volume_extension:hosts", "clusters:get_all", "clusters:get", "clusters:update",
    "volume_extension:default_get_all", "volume_extension:list_manageable",
    "volume_extension:volume_manage", "volume_extension:volume_unmanage",
    "group:group_types:create", "group:group_types:update", "group:group_types:delete",
    "group:group_types_specs", "group:reset_status", "workers:cleanup",
    "group:reset_group_snapshot_status", "group:group_project_attribute",
    "group:group_snapshot_project_attribute",
)

POLICIES: dict[str, str] = {
    **BASE,
    **{name: MEMBER for name in _MEMBER_ACTIONS},
    **{name: READER for name in _READER_ACTIONS},
    **{name: ADMIN for name in _ADMIN_ACTIONS},
    # 3.62's default types: any admin of the project (domain or system admins too)
    "volume_extension:default_set_or_update": ANY_ADMIN,
    "volume_extension:default_get": ANY_ADMIN,
    "volume_extension:default_unset": ANY_ADMIN,
    # os-availability-zone has no policy upstream; listed so the matrix names it
    "volume_extension:availability_zone_list": "@",
}
