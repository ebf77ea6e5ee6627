"""The one error of preparing an image: its message is the server's fault, as Nova's."""

from __future__ import annotations


class ImageError(Exception):
    """An image this cloud cannot boot; `str()` says why, naming the image."""

    def __init__(self, image_id: str, why: str) -> None:
        super().__init__(f"Image {image_id} {why}")
        self.image_id = image_id


class ImageBusy(ImageError):
    """Its root filesystem is still in use (a guest's overlay holds it): release later."""


class Refused(Exception):
    """Why an image cannot be prepared, before its id is known to the message (the entry
    point makes it an ImageError): "has no root filesystem: ..."."""
