"""Images made root filesystems (issue 30): `prepare` an image's bytes (raw or qcow2 disks
and filesystems, docker and OCI archives) into a read-only root under a cache dir, once
per image; `release` one, `cleanup_all` at a stop. See prepare.py."""

from stackling.dataplane.images.errors import ImageBusy, ImageError
from stackling.dataplane.images.layers import Limits
from stackling.dataplane.images.prepare import Prepared, cleanup_all, prepare, release

__all__ = ["ImageBusy", "ImageError", "Limits", "Prepared", "cleanup_all", "prepare", "release"]
