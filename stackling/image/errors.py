"""The image service's own errors (rendered by common.errors.render_image)."""

from __future__ import annotations

from stackling.common.errors import ApiError
from stackling.common.limits import CLOSE


class StorageMediaFull(ApiError):
    """Glance's answer to glance_store's StorageFull (ENOSPC/EFBIG on the file store): 413,
    the image left as it was (`queued`). The rest of the body is not read: the connection
    closes after the answer."""

    status = 413
    message = ("Image storage media is full: There is not enough disk space on the image "
               "storage media.")

    def __init__(self) -> None:
        super().__init__(headers=dict(CLOSE))
