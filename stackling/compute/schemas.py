"""Request-body schemas, one dict per shape; a new microversion is a copy plus a change."""

from __future__ import annotations

import copy
from typing import Any

NAME = {"type": "string", "minLength": 1, "maxLength": 255, "format": "name"}
DESCRIPTION = {"type": ["string", "null"], "minLength": 0, "maxLength": 255,
               "pattern": r"^[^\x00-\x1f\x7f]*$"}
POSITIVE_INT = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 1, "minLength": 1}
NON_NEGATIVE_INT = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0,
                    "minLength": 1}
BOOLEAN = {"type": ["boolean", "string"],
           "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
                    False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"]}
IP_ADDRESS = {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
METADATA = {"type": "object",
            "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": "string",
                                                                "maxLength": 255}},
            "additionalProperties": False}
TAG = {"type": "string", "maxLength": 60, "pattern": "^[^,/]*$"}

# ------------------------------------------------------------------ servers
_NETWORK_ITEM_2_1 = {
    "type": "object",
    "properties": {
        "fixed_ip": IP_ADDRESS,
        "port": {"oneOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
        "uuid": {"type": "string"},
    },
    "additionalProperties": False,
}
_NETWORK_ITEM_2_32 = copy.deepcopy(_NETWORK_ITEM_2_1)
_NETWORK_ITEM_2_32["properties"]["tag"] = TAG
# 2.37 made uuids strict and (by an upstream slip, fixed in 2.42) dropped `tag`.
_NETWORK_ITEM_2_37 = copy.deepcopy(_NETWORK_ITEM_2_1)
_NETWORK_ITEM_2_37["properties"]["uuid"] = {"type": "string", "format": "uuid"}
_NETWORK_ITEM_2_42 = copy.deepcopy(_NETWORK_ITEM_2_37)
_NETWORK_ITEM_2_42["properties"]["tag"] = TAG

_BDM = {"type": "array", "items": {"type": "object"}}

# Nova's scheduler hints: `group` is a server group's uuid; other hints pass.
_HINTS = {"type": "object", "properties": {"group": {"type": "string", "format": "uuid"}}}

_SERVER_2_1: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {
            "type": "object",
            "properties": {
                "name": NAME,
                "imageRef": {"type": "string"},
                "flavorRef": {"type": ["string", "integer"], "minLength": 1},
                "adminPass": {"type": "string"},
                "metadata": METADATA,
                "networks": {"type": "array", "items": _NETWORK_ITEM_2_1},
                "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
                "accessIPv4": {"type": "string", "format": "ipv4"},
                "accessIPv6": {"type": "string", "format": "ipv6"},
                "personality": {"type": "array", "items": {"type": "object"}},
                "availability_zone": {"type": "string", "minLength": 1, "maxLength": 255},
                "block_device_mapping": _BDM,
                "block_device_mapping_v2": _BDM,
                "config_drive": BOOLEAN,
                "key_name": {"type": "string", "minLength": 1, "maxLength": 255},
                "min_count": POSITIVE_INT,
                "max_count": POSITIVE_INT,
                "return_reservation_id": BOOLEAN,
                "security_groups": {
                    "type": "array",
                    "items": {"type": "object",
                              "properties": {"name": {"type": "string", "minLength": 1,
                                                      "maxLength": 255}},
                              "additionalProperties": False}},
                "user_data": {"type": "string", "format": "base64", "maxLength": 65535},
            },
            "required": ["name", "flavorRef"],
            "additionalProperties": False,
        },
        "os:scheduler_hints": _HINTS,
        "OS-SCH-HNT:scheduler_hints": _HINTS,
    },
    "required": ["server"],
    "additionalProperties": False,
}


def _server_variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    schema = copy.deepcopy(base)
    server = schema["properties"]["server"]
    for key, value in changes.items():
        if key == "required":
            server["required"] = value
        else:
            server["properties"][key] = value
    return schema


_SERVER_2_19 = _server_variant(_SERVER_2_1, description=DESCRIPTION)
_SERVER_2_32 = _server_variant(_SERVER_2_19,
                               networks={"type": "array", "items": _NETWORK_ITEM_2_32})
_SERVER_2_37 = _server_variant(
    _SERVER_2_32,
    networks={"oneOf": [{"type": "array", "items": _NETWORK_ITEM_2_37},
                        {"type": "string", "enum": ["none", "auto"]}]},
    required=["name", "flavorRef", "networks"])
_SERVER_2_42 = _server_variant(
    _SERVER_2_37,
    networks={"oneOf": [{"type": "array", "items": _NETWORK_ITEM_2_42},
                        {"type": "string", "enum": ["none", "auto"]}]})

_SERVER_2_52 = _server_variant(_SERVER_2_42, tags={"type": "array", "items": TAG,
                                                  "maxItems": 50})
_SERVER_2_57 = copy.deepcopy(_SERVER_2_52)
del _SERVER_2_57["properties"]["server"]["properties"]["personality"]

# Nova's parameter_types.trusted_certs: up to 50 unique certificate ids, or null.
TRUSTED_CERTS = {"type": ["array", "null"], "minItems": 1, "maxItems": 50, "uniqueItems": True,
                 "items": {"type": "string", "minLength": 1}}
_SERVER_2_63 = _server_variant(_SERVER_2_57, trusted_image_certificates=TRUSTED_CERTS)
# 2.74: a requested host and/or node (admins; the scheduler still runs)
_SERVER_2_74 = _server_variant(
    _SERVER_2_63, host={"type": "string", "minLength": 1, "maxLength": 255,
                        "pattern": "^[a-zA-Z0-9-._]*$"},
    hypervisor_hostname={"type": "string", "minLength": 1, "maxLength": 255,
                         "pattern": "^[a-zA-Z0-9-._]*$"})

# 2.90: a hostname of the user's choosing; 2.94: an FQDN
HOSTNAME = {"type": "string", "pattern": "^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$",
            "minLength": 2, "maxLength": 63}
FQDN = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
_SERVER_2_90 = _server_variant(_SERVER_2_74, hostname=HOSTNAME)
_SERVER_2_94 = _server_variant(_SERVER_2_74, hostname=FQDN)

SERVER_CREATE = {"2.1": _SERVER_2_1, "2.19": _SERVER_2_19, "2.32": _SERVER_2_32,
                 "2.37": _SERVER_2_37, "2.42": _SERVER_2_42, "2.52": _SERVER_2_52,
                 "2.57": _SERVER_2_57, "2.63": _SERVER_2_63, "2.74": _SERVER_2_74,
                 "2.90": _SERVER_2_90, "2.94": _SERVER_2_94}

_UPDATE_2_1 = {
    "type": "object",
    "properties": {"server": {
        "type": "object",
        "properties": {"name": NAME,
                       "accessIPv4": {"type": "string", "format": "ipv4"},
                       "accessIPv6": {"type": "string", "format": "ipv6"},
                       "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]}},
        "additionalProperties": False}},
    "required": ["server"],
    "additionalProperties": False,
}
_UPDATE_2_19 = copy.deepcopy(_UPDATE_2_1)
_UPDATE_2_19["properties"]["server"]["properties"]["description"] = DESCRIPTION
_UPDATE_2_90 = copy.deepcopy(_UPDATE_2_19)
_UPDATE_2_90["properties"]["server"]["properties"]["hostname"] = HOSTNAME
_UPDATE_2_94 = copy.deepcopy(_UPDATE_2_19)
_UPDATE_2_94["properties"]["server"]["properties"]["hostname"] = FQDN
_UPDATE_2_104 = copy.deepcopy(_UPDATE_2_94)  # Nova's name_or_none
_UPDATE_2_104["properties"]["server"]["properties"]["pinned_availability_zone"] = {
    "oneOf": [NAME, {"type": "null"}]}
SERVER_UPDATE = {"2.1": _UPDATE_2_1, "2.19": _UPDATE_2_19, "2.90": _UPDATE_2_90,
                 "2.94": _UPDATE_2_94, "2.104": _UPDATE_2_104}

LOCK_2_73 = {"type": "object",
             "properties": {"lock": {"type": ["object", "null"],
                                     "properties": {"locked_reason": {
                                         "type": "string", "minLength": 1, "maxLength": 255}},
                                     "additionalProperties": False}},
             "required": ["lock"], "additionalProperties": False}

# ------------------------------------------------------------------ flavors, keypairs
FLAVOR_CREATE = {
    "type": "object",
    "properties": {"flavor": {
        "type": "object",
        "properties": {
            "name": NAME,
            # Nova takes a number too and stores it as a string (str(1234) == "1234")
            "id": {"type": ["string", "number", "null"], "minLength": 1, "maxLength": 255,
                   "pattern": r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"},
            "ram": {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 1},
            "vcpus": {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 1},
            "disk": NON_NEGATIVE_INT,
            "OS-FLV-EXT-DATA:ephemeral": NON_NEGATIVE_INT,
            "swap": NON_NEGATIVE_INT,
            "rxtx_factor": {"type": ["number", "string"], "minimum": 0},
            "os-flavor-access:is_public": BOOLEAN,
        },
        "required": ["name", "ram", "vcpus", "disk"],
        "additionalProperties": False}},
    "required": ["flavor"],
    "additionalProperties": False,
}

_FLAVOR_DESCRIPTION = {"type": ["string", "null"], "minLength": 0, "maxLength": 65535,
                       "pattern": r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"}
FLAVOR_CREATE_2_55 = copy.deepcopy(FLAVOR_CREATE)
FLAVOR_CREATE_2_55["properties"]["flavor"]["properties"]["description"] = _FLAVOR_DESCRIPTION
FLAVOR_CREATE_2_102 = copy.deepcopy(FLAVOR_CREATE_2_55)  # rxtx_factor is gone
del FLAVOR_CREATE_2_102["properties"]["flavor"]["properties"]["rxtx_factor"]
FLAVOR_CREATES = {"2.1": FLAVOR_CREATE, "2.55": FLAVOR_CREATE_2_55,
                  "2.102": FLAVOR_CREATE_2_102}
FLAVOR_UPDATE = {"type": "object",
                 "properties": {"flavor": {"type": "object",
                                           "properties": {"description": _FLAVOR_DESCRIPTION},
                                           "required": ["description"],
                                           "additionalProperties": False}},
                 "required": ["flavor"], "additionalProperties": False}

_TENANT = {"type": "object", "properties": {"tenant": {"type": "string", "minLength": 1,
                                                      "maxLength": 255}},
           "required": ["tenant"], "additionalProperties": False}
FLAVOR_ACCESS_ACTIONS = {
    a: {"type": "object", "properties": {a: _TENANT}, "required": [a],
        "additionalProperties": False}
    for a in ("addTenantAccess", "removeTenantAccess")}

EXTRA_SPECS = {"type": "object", "properties": {"extra_specs": {
    "type": "object",
    "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": ["string", "number", "boolean"]}},
    "additionalProperties": False}},
    "required": ["extra_specs"], "additionalProperties": False}

_KEYPAIR_2_1 = {
    "type": "object",
    "properties": {"keypair": {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 255,
                                "pattern": r"^[a-zA-Z0-9 _-]+$"},
                       "public_key": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False}},
    "required": ["keypair"],
    "additionalProperties": False,
}
_KEYPAIR_2_2 = copy.deepcopy(_KEYPAIR_2_1)
_KEYPAIR_2_2["properties"]["keypair"]["properties"]["type"] = {"type": "string",
                                                              "enum": ["ssh", "x509"]}
_KEYPAIR_2_10 = copy.deepcopy(_KEYPAIR_2_2)
_KEYPAIR_2_10["properties"]["keypair"]["properties"]["user_id"] = {"type": "string"}
# 2.92: import only (public_key required), and '@' and '.' allowed in names
_KEYPAIR_2_92 = copy.deepcopy(_KEYPAIR_2_10)
_KEYPAIR_2_92["properties"]["keypair"]["properties"]["name"] = {
    "type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[_\-\@\. a-zA-Z0-9]+$"}
_KEYPAIR_2_92["properties"]["keypair"]["required"] = ["name", "public_key"]
KEYPAIR_CREATE = {"2.1": _KEYPAIR_2_1, "2.2": _KEYPAIR_2_2, "2.10": _KEYPAIR_2_10,
                  "2.92": _KEYPAIR_2_92}

# ------------------------------------------------------------------ aggregates, services
_AZ = {"type": ["string", "null"], "minLength": 1, "maxLength": 255}
AGGREGATE_CREATE = {
    "type": "object",
    "properties": {"aggregate": {
        "type": "object",
        "properties": {"name": NAME, "availability_zone": _AZ},
        "required": ["name"], "additionalProperties": False}},
    "required": ["aggregate"], "additionalProperties": False,
}
AGGREGATE_UPDATE = {
    "type": "object",
    "properties": {"aggregate": {
        "type": "object",
        "properties": {"name": NAME, "availability_zone": _AZ},
        "additionalProperties": False, "anyOf": [{"required": ["name"]},
                                                 {"required": ["availability_zone"]}]}},
    "required": ["aggregate"], "additionalProperties": False,
}
_HOST = {"type": "object", "properties": {"host": {"type": "string", "minLength": 1,
                                                   "maxLength": 255}},
         "required": ["host"], "additionalProperties": False}
AGGREGATE_ADD_HOST = {"type": "object", "properties": {"add_host": _HOST},
                      "required": ["add_host"], "additionalProperties": False}
AGGREGATE_REMOVE_HOST = {"type": "object", "properties": {"remove_host": _HOST},
                         "required": ["remove_host"], "additionalProperties": False}
AGGREGATE_SET_METADATA = {
    "type": "object",
    "properties": {"set_metadata": {
        "type": "object",
        "properties": {"metadata": {
            "type": "object",
            "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {
                "type": ["string", "null"], "maxLength": 255}},
            "additionalProperties": False}},
        "required": ["metadata"], "additionalProperties": False}},
    "required": ["set_metadata"], "additionalProperties": False,
}

SERVICE_ACTION = {"type": "object",
                  "properties": {"host": {"type": "string"}, "binary": {"type": "string"},
                                 "disabled_reason": {"type": "string", "maxLength": 255},
                                 "forced_down": BOOLEAN},
                  "required": ["host", "binary"], "additionalProperties": False}

SERVICE_UPDATE = {"type": "object",
                  "properties": {"status": {"type": "string", "enum": ["enabled", "disabled"]},
                                 "disabled_reason": {"type": "string", "minLength": 1,
                                                     "maxLength": 255},
                                 "forced_down": BOOLEAN},
                  "additionalProperties": False}

# ------------------------------------------------------------------ interfaces
_INTERFACE_2_1 = {
    "type": "object",
    "properties": {"interfaceAttachment": {
        "type": "object",
        "properties": {
            "net_id": {"type": "string", "format": "uuid"},
            "port_id": {"type": "string", "format": "uuid"},
            "fixed_ips": {"type": "array", "minItems": 1, "maxItems": 1,
                          "items": {"type": "object",
                                    "properties": {"ip_address": IP_ADDRESS},
                                    "required": ["ip_address"],
                                    "additionalProperties": False}}},
        "additionalProperties": False}},
    "additionalProperties": False,
}
_INTERFACE_2_49 = copy.deepcopy(_INTERFACE_2_1)
_INTERFACE_2_49["properties"]["interfaceAttachment"]["properties"]["tag"] = TAG
INTERFACE_ATTACH = {"2.1": _INTERFACE_2_1, "2.49": _INTERFACE_2_49}
