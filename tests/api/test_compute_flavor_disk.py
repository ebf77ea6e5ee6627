"""The flavor is the server's size (issue 30): an image-backed server's root disk is the
flavor's disk, checked as Nova's `_validate_flavor_image_nostatus` checks it at create,
rebuild and resize (FlavorDiskSmallerThanImage, FlavorDiskSmallerThanMinDisk: 400), a
zero-disk flavor only for volume-backed servers unless `servers:create:zero_disk_flavor`
(admin) allows it (403), and a resize to a zero-disk flavor refused (CannotResizeDisk)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from tests.api.test_compute import CIRROS, MAX, boot, mv, wait_status
from tests.api.test_compute_actions import (
    act,
    show,
    unlimited,  # noqa: F401 (autouse fixture)
)

GiB = 1 << 30
IMAGES = "/image/v2/images"
ZERO_DISK = "Only volume-backed servers are allowed for flavors with zero disk."


def _image(api: Any, name: str, min_disk: int = 0, size: int | None = None) -> str:
    """A public image of a few bytes; `size`: the size its row says (a test does not upload
    gigabytes to have an image larger than a flavor's disk)."""
    r = api.post(IMAGES, json={"name": name, "disk_format": "raw", "container_format": "bare",
                               "visibility": "public", "min_disk": min_disk})
    assert r.status_code == 201, r.text
    image_id = r.json()["id"]
    r = api.put(f"{IMAGES}/{image_id}/file", content=b"\0" * 512,
                headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    if size is not None:
        from stackling.image.models import Image

        with api.runtime.db.transaction() as db:
            db.execute(update(Image).where(Image.id == image_id).values(size=size))
    return image_id


def _flavor(api: Any, name: str, disk: int, ram: int = 512) -> str:
    r = api.post("/compute/v2.1/flavors", json={"flavor": {
        "name": name, "ram": ram, "vcpus": 1, "disk": disk}})
    assert r.status_code == 200, r.text
    return r.json()["flavor"]["id"]


def _bad(r: Any, status: int = 400) -> str:
    key = {400: "badRequest", 403: "forbidden"}[status]
    assert r.status_code == status, r.text
    return r.json()[key]["message"]


def _active(api: Any, user: str = "demo", **server: Any) -> str:
    r = boot(api, user=user, networks="none", **server)
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"], user=user)
    assert srv["status"] == "ACTIVE", srv.get("fault")
    return srv["id"]


def _min_disk_message(flavor_gb: int, min_gb: int) -> str:
    return ("Flavor's disk is smaller than the minimum size specified in image metadata. "
            f"Flavor disk is {flavor_gb * GiB} bytes, minimum size is {min_gb * GiB} bytes.")


def _size_message(flavor_gb: int, size: int) -> str:
    return ("Flavor's disk is too small for requested image. "
            f"Flavor disk is {flavor_gb * GiB} bytes, image is {size} bytes.")


def test_create_checks_the_flavor_disk_against_the_image(api):
    needs2 = _image(api, "needs-2", min_disk=2)
    large = _image(api, "large", size=GiB + 1)
    # m1.tiny: 1 GiB
    assert _bad(boot(api, imageRef=needs2, networks="none")) == _min_disk_message(1, 2)
    assert _bad(boot(api, imageRef=large, networks="none")) == _size_message(1, GiB + 1)
    # the image's size is checked first, as Nova checks it
    both = _image(api, "both", min_disk=5, size=3 * GiB)
    assert _bad(boot(api, imageRef=both, networks="none")) == _size_message(1, 3 * GiB)
    # a flavor that holds them boots them
    _active(api, imageRef=needs2, flavorRef="2")  # m1.small: 20 GiB
    _active(api, imageRef=large, flavorRef=_flavor(api, "two-gb", 2))
    # exactly the flavor's disk fits
    _active(api, imageRef=_image(api, "exact", min_disk=1, size=GiB))


def test_a_zero_disk_flavor_is_for_volume_backed_servers(api):
    zero = _flavor(api, "zero-disk", 0)
    needs2 = _image(api, "zero-needs-2", min_disk=2, size=3 * GiB)
    assert _bad(boot(api, flavorRef=zero, networks="none"), 403) == ZERO_DISK
    assert _bad(boot(api, flavorRef=zero, imageRef=needs2, networks="none"), 403) == ZERO_DISK
    # the policy's (admin): then no size is checked (the disk is the image's size)
    _active(api, user="admin", flavorRef=zero, imageRef=needs2)
    # volume-backed: the flavor's disk is not the root disk, nothing of it checked
    sid = _active(api, flavorRef=zero, imageRef="", block_device_mapping_v2=[
        {"uuid": CIRROS, "source_type": "image", "destination_type": "volume",
         "boot_index": 0, "volume_size": 1, "delete_on_termination": True}])
    assert show(api, sid)["image"] == ""


def test_rebuild_checks_the_new_image_against_the_flavor(api):
    sid = _active(api)  # m1.tiny
    needs2 = _image(api, "rebuild-needs-2", min_disk=2)
    large = _image(api, "rebuild-large", size=2 * GiB)
    assert _bad(act(api, sid, {"rebuild": {"imageRef": needs2}})) == _min_disk_message(1, 2)
    assert _bad(act(api, sid, {"rebuild": {"imageRef": large}})) == _size_message(1, 2 * GiB)
    srv = show(api, sid)
    assert srv["status"] == "ACTIVE" and srv["image"]["id"] == CIRROS  # nothing changed
    fits = _image(api, "rebuild-fits", min_disk=1, size=GiB)
    assert act(api, sid, {"rebuild": {"imageRef": fits}}).status_code == 202
    assert wait_status(api, sid)["image"]["id"] == fits
    # a zero-disk server: rebuilt by whom the policy allows (admin), no size checked
    zero = _flavor(api, "rebuild-zero", 0)
    admins = _active(api, user="admin", flavorRef=zero)
    r = act(api, admins, {"rebuild": {"imageRef": large}}, user="admin")
    assert r.status_code == 202, r.text


def test_resize_checks_the_new_flavor_disk(api):
    small = _active(api, flavorRef="2")  # m1.small: 20 GiB
    # the server's disk never shrinks: its min_disk is at least the flavor's it has
    assert _bad(act(api, small, {"resize": {"flavorRef": "1"}})) == _min_disk_message(1, 20)
    # a zero-disk flavor is no size for an image-backed server
    zero = _flavor(api, "resize-zero", 0)
    assert _bad(act(api, small, {"resize": {"flavorRef": zero}})) == (
        "Server disk was unable to be resized because: Resize to zero disk flavor is not "
        "allowed.")
    # the image's min_disk and min_ram hold for the new flavor
    needs3 = _image(api, "resize-needs-3", min_disk=3)
    tiny = _active(api, imageRef=needs3, flavorRef=_flavor(api, "resize-3gb", 3))
    two = _flavor(api, "resize-2gb", 2, ram=1024)
    assert _bad(act(api, tiny, {"resize": {"flavorRef": two}})) == _min_disk_message(2, 3)
    # a larger one resizes, and so on to a larger still
    assert act(api, tiny, {"resize": {"flavorRef": "2"}}).status_code == 202
    assert wait_status(api, tiny, statuses=("VERIFY_RESIZE", "ERROR"))["status"] == \
        "VERIFY_RESIZE"
    assert act(api, tiny, {"confirmResize": None}).status_code == 204
    assert show(api, tiny)["flavor"]["disk"] == 20
    # from a zero-disk flavor to another: the policy's (a non-admin's server cannot have one)
    admins = _active(api, user="admin", flavorRef=zero)
    other = _flavor(api, "resize-zero-2", 0, ram=1024)
    r = act(api, admins, {"resize": {"flavorRef": other}}, user="admin")
    assert r.status_code == 202, r.text


def test_volume_backed_resize_to_zero_disk_is_not_refused(api):
    sid = _active(api, imageRef="", block_device_mapping_v2=[
        {"uuid": CIRROS, "source_type": "image", "destination_type": "volume",
         "boot_index": 0, "volume_size": 1, "delete_on_termination": True}])
    zero = _flavor(api, "vb-zero", 0)
    r = act(api, sid, {"resize": {"flavorRef": zero}})
    assert r.status_code == 202, r.text


def test_the_checks_hold_at_every_microversion(api):
    """Nova's have no microversion: 2.1 answers as the latest."""
    needs2 = _image(api, "old-needs-2", min_disk=2)
    assert _bad(boot(api, version="2.1", imageRef=needs2)) == _min_disk_message(1, 2)
    zero = _flavor(api, "old-zero", 0)
    assert _bad(boot(api, version="2.1", flavorRef=zero), 403) == ZERO_DISK
    from stackling.compute.component import ADMIN, POLICIES

    assert POLICIES["os_compute_api:servers:create:zero_disk_flavor"] == ADMIN
    assert mv(MAX)
