"""Glance's secure-RBAC defaults (glance/policies/image.py with enforce_new_defaults):
a project's members write its images, its readers read them, only an admin publicizes.

The target is the image: `project_id` is its owner, `visibility` its visibility."""

from __future__ import annotations

from typing import Any

from stackling.image.models import Image

ADMIN_OR_MEMBER = "role:admin or (role:member and project_id:%(project_id)s)"
ADMIN_OR_READER = "role:admin or (role:reader and project_id:%(project_id)s)"
ADMIN_OR_READER_GET_IMAGE = (
    "role:admin or (role:reader and (project_id:%(project_id)s or "
    "project_id:%(member_id)s or 'community':%(visibility)s or 'public':%(visibility)s or "
    "'shared':%(visibility)s))")
# image members: the owner's readers and the member's
ADMIN_OR_READER_OR_SHARED_MEMBER = (
    "role:admin or (role:reader and (project_id:%(project_id)s or "
    "project_id:%(member_id)s))")
ADMIN_OR_SHARED_MEMBER = "role:admin or (role:member and project_id:%(member_id)s)"
# metadefs (glance/policies/metadef.py): the owner's readers, or anyone's when public;
# every write an admin's
ADMIN_OR_READER_GET_NAMESPACE = (
    "role:admin or (role:reader and (project_id:%(project_id)s or "
    "'public':%(visibility)s))")
_METADEF_READS = ("get_metadef_namespace", "get_metadef_object", "get_metadef_objects",
                  "list_metadef_resource_types", "get_metadef_resource_type",
                  "get_metadef_property", "get_metadef_properties", "get_metadef_tag",
                  "get_metadef_tags")
_METADEF_WRITES = ("modify_metadef_namespace", "add_metadef_namespace",
                   "delete_metadef_namespace", "modify_metadef_object", "add_metadef_object",
                   "delete_metadef_object", "add_metadef_resource_type_association",
                   "remove_metadef_resource_type_association", "modify_metadef_property",
                   "add_metadef_property", "remove_metadef_property", "modify_metadef_tag",
                   "add_metadef_tag", "add_metadef_tags", "delete_metadef_tag",
                   "delete_metadef_tags")

POLICIES: dict[str, str] = {
    "get_images": ADMIN_OR_READER,
    "get_image": ADMIN_OR_READER_GET_IMAGE,
    "download_image": ADMIN_OR_READER_GET_IMAGE,
    "add_image": ADMIN_OR_MEMBER,
    "modify_image": ADMIN_OR_MEMBER,
    "upload_image": ADMIN_OR_MEMBER,
    "delete_image": ADMIN_OR_MEMBER,
    "publicize_image": "role:admin",
    "communitize_image": ADMIN_OR_MEMBER,
    "deactivate": ADMIN_OR_MEMBER,
    "reactivate": ADMIN_OR_MEMBER,
    "add_member": ADMIN_OR_MEMBER,
    "delete_member": ADMIN_OR_MEMBER,
    "get_member": ADMIN_OR_READER_OR_SHARED_MEMBER,
    "get_members": ADMIN_OR_READER_OR_SHARED_MEMBER,
    "modify_member": ADMIN_OR_SHARED_MEMBER,
    "copy_image": "role:admin",  # Glance: project admins only, for now
    "delete_image_location": "role:admin",  # DELETE /v2/stores/{store}/{image}
    "stores_info_detail": "role:admin",
    # the tasks API is an admin's (Glance: tasks_api_access and every task rule)
    "get_tasks": "role:admin",
    "get_task": "role:admin",
    "add_task": "role:admin",
    "get_metadef_namespaces": ADMIN_OR_READER,
    **{name: ADMIN_OR_READER_GET_NAMESPACE for name in _METADEF_READS},
    **{name: "role:admin" for name in _METADEF_WRITES},
}


def target(image: Image, member_id: str | None = None) -> dict[str, Any]:
    return {"project_id": image.owner, "owner": image.owner, "visibility": image.visibility,
            "member_id": member_id}
