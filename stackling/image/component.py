"""The image service (Glance v2, minimal) as a stackling component."""

from __future__ import annotations

from stackling.image import api, bootstrap, policy
from stackling.runtime import CatalogEntry, Component

COMPONENT = Component(
    name="image",
    build=api.build,
    policies=policy.POLICIES,
    catalog=CatalogEntry(type="image", name="glance", path="/image"),
    bootstrap=[("cirros", bootstrap.bootstrap_images), ("debian", bootstrap.bootstrap_debian)],
    start=bootstrap.start,  # debian-12 for a cloud bootstrapped before its file existed
)
