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
    "'community':%(visibility)s or 'public':%(visibility)s))")

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
}


def target(image: Image) -> dict[str, Any]:
    return {"project_id": image.owner, "owner": image.owner, "visibility": image.visibility}
