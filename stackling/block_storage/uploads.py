"""os-volume_upload_image (`openstack image create --volume`): not served yet."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.block_storage import errors
from stackling.block_storage.backend import FileDriver
from stackling.block_storage.models import Volume
from stackling.common.context import RequestContext


def upload_to_image(db: Session, ctx: RequestContext, driver: FileDriver, volume: Volume,
                    args: dict[str, Any], *, public_allowed: bool) -> dict[str, Any]:
    # The image service's interface has no call that stores data for a new image yet.
    raise errors.InvalidVolume(reason="uploading a volume to an image is not supported by "
                               "this cloud yet")
