"""Glance's image schema (the writable attributes), checked with the common jsonschema
helper and reported as Glance does: "Provided object does not match schema 'image':
<jsonschema's best_match message>" (a 400)."""

from __future__ import annotations

from typing import Any

from stackling.common import schema as common_schema
from stackling.common.errors import BadRequest

DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")
VISIBILITIES = ("public", "private", "shared", "community")
UUID_PATTERN = ("^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
                "-([0-9a-fA-F]){12}$")
INT_MAX = 2**31 - 1  # Glance stores min_disk/min_ram in INTEGER columns

IMAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": UUID_PATTERN},
        "name": {"type": ["null", "string"], "maxLength": 255},
        "visibility": {"type": "string", "enum": list(VISIBILITIES)},
        "protected": {"type": "boolean"},
        "os_hidden": {"type": "boolean"},
        "container_format": {"type": ["null", "string"], "maxLength": 255,
                             "enum": [None, *CONTAINER_FORMATS]},
        "disk_format": {"type": ["null", "string"], "maxLength": 255,
                        "enum": [None, *DISK_FORMATS]},
        "min_ram": {"type": "integer", "minimum": 0, "maximum": INT_MAX},
        "min_disk": {"type": "integer", "minimum": 0, "maximum": INT_MAX},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 255}},
    },
    # Glance's extra properties are strings (keys up to 255 characters).
    "propertyNames": {"maxLength": 255},
    "additionalProperties": {"type": "string"},
}


def check_image(values: dict[str, Any]) -> None:
    """400 unless `values` (a create body, or one patched attribute) fits the schema."""
    err = common_schema.first_error(IMAGE, values, best=True)
    if err is not None:
        raise BadRequest(f"Provided object does not match schema 'image': {err.message}")
