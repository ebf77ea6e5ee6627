"""The compute request validator reports jsonschema's first error in Nova's format (the
expected strings are what jsonschema 4 + Nova's formatter produce for these bodies)."""

from __future__ import annotations

import pytest

from stackling.common.microversion import Version
from stackling.compute import microversions, schemas, validation
from stackling.compute.errors import ValidationError

NET = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def message(version: str, server: dict) -> str:
    schema = microversions.pick(Version.parse(version), schemas.SERVER_CREATE)
    with pytest.raises(ValidationError) as err:
        validation.validate(schema, {"server": {"name": "x", "flavorRef": "1", **server}})
    return err.value.text


@pytest.mark.parametrize("version,server,expected", [
    ("2.37", {}, "Invalid input for field/attribute server. Value: {'name': 'x', "
                 "'flavorRef': '1'}. 'networks' is a required property"),
    ("2.37", {"networks": [{"uuid": "auto"}]},
     "Invalid input for field/attribute networks. Value: [{'uuid': 'auto'}]. "
     "[{'uuid': 'auto'}] is not valid under any of the given schemas"),
    ("2.37", {"networks": "bogus"}, "Invalid input for field/attribute networks. Value: "
                                    "bogus. 'bogus' is not valid under any of the given schemas"),
    ("2.36", {"networks": "auto"},
     "Invalid input for field/attribute networks. Value: auto. 'auto' is not of type 'array'"),
    ("2.36", {"networks": [{"uuid": NET, "fixed_ip": "nope"}]},
     "Invalid input for field/attribute fixed_ip. Value: nope. 'nope' is not valid under any "
     "of the given schemas"),
    ("2.1", {"bogus": 1}, "Invalid input for field/attribute server. Value: {'name': 'x', "
                          "'flavorRef': '1', 'bogus': 1}. Additional properties are not "
                          "allowed ('bogus' was unexpected)"),
])
def test_nova_messages(version, server, expected):
    assert message(version, server) == expected
