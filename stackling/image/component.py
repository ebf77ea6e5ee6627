"""The image service (Glance v2, minimal) as a stackling component."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.image import api, bootstrap, policy
from stackling.runtime import CatalogEntry, Component


def bootstrap_metadefs(db: Session, runtime: Any) -> None:
    """Glance's shipped metadata definitions, owned by the admin project."""
    from stackling.common.context import RequestContext
    from stackling.identity import interface as identity
    from stackling.image import metadefs

    metadefs.load_shipped(db, RequestContext(roles=("admin",)), identity.admin_project_id(db))

COMPONENT = Component(
    name="image",
    build=api.build,
    policies=policy.POLICIES,
    catalog=CatalogEntry(type="image", name="glance", path="/image"),
    bootstrap=[("cirros", bootstrap.bootstrap_images), ("debian", bootstrap.bootstrap_debian),
               ("metadefs", bootstrap_metadefs)],
    start=bootstrap.start,  # debian-12 for a cloud bootstrapped before its file existed
)
