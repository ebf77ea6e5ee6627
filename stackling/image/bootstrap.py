"""The demo cloud's image: a public, active cirros (metadata only; no data file)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.image.models import Image

CIRROS_ID = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def bootstrap_images(db: Session, runtime: Any) -> None:
    from stackling.identity import interface as identity

    owner = identity.admin_project_id(db)  # the owner is the admin project
    db.add(Image(
        id=CIRROS_ID, name="cirros", status="active", visibility="public", owner=owner,
        disk_format="qcow2", container_format="bare", min_disk=0, min_ram=0,
        size=21430272, virtual_size=117440512, checksum="443b7623e27ecf03dc9e01ee93f67afe",
        os_hash_algo="sha512",
        os_hash_value=("6513f21e44aa3da349f248188a44bc304a3653a04122d8fb4535423c8e1d14cd"
                       "6a153f735bb0982e2161b5b5186106570c17a9e58b64dd39390617cd5a350f78"),
        properties={"hw_rng_model": "virtio"}, tags=[]))
