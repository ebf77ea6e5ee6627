"""Placement's microversion table and error codes: data with rules."""

from __future__ import annotations

from stackling.common.microversion import Version
from stackling.placement import errors
from stackling.placement.api import build
from stackling.placement.microversions import MAX_VERSION, SPEC, VERSIONS


def test_versions_are_contiguous_and_described():
    parsed = [Version.parse(v) for v, _ in VERSIONS]
    assert parsed == [Version(1, minor) for minor in range(len(parsed))]
    assert all(text for _, text in VERSIONS)
    assert str(MAX_VERSION) == "1.39" and SPEC.max_version == MAX_VERSION


def test_every_gate_names_a_listed_version():
    listed = {v for v, _ in VERSIONS}
    for route in build(None).routes:
        for handler in route.methods.values():
            since, until = getattr(handler, "placement_versions", ("1.0", None))
            assert since in listed and (until is None or until in listed), route.path


def test_error_codes_are_unique_and_namespaced():
    assert len(set(errors.ALL_CODES)) == len(errors.ALL_CODES)
    assert all(code.startswith("placement.") for code in errors.ALL_CODES)
    assert errors.ConcurrentUpdate.code == "placement.concurrent_update"
    assert errors.InventoryInUse.code == "placement.inventory.inuse"


def test_negotiation_as_microversion_parse():
    assert SPEC.negotiate({}) == Version(1, 0)
    assert SPEC.negotiate({"openstack-api-version": "placement latest"}) == MAX_VERSION
    assert SPEC.negotiate({"openstack-api-version": "placement 1.05"}) == Version(1, 5)
