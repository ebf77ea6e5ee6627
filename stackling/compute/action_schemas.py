"""Request schemas of the server actions and moves, per microversion (Nova's
schemas/{migrate_server,servers,rescue,console_output,remote_consoles,...}.py)."""

from __future__ import annotations

import copy
from typing import Any

from stackling.compute.schemas import (
    BOOLEAN,
    DESCRIPTION,
    FQDN,
    HOSTNAME,
    METADATA,
    NAME,
    TRUSTED_CERTS,
)


def _action(name: str, inner: dict[str, Any], *, nullable: bool = False) -> dict[str, Any]:
    if nullable:
        inner = {**inner, "type": [inner.get("type", "object"), "null"]}
    return {"type": "object", "properties": {name: inner}, "required": [name],
            "additionalProperties": False}


_HOST = {"type": ["string", "null"], "minLength": 1, "maxLength": 255,
         "pattern": "^[a-zA-Z0-9-._]*$"}

MIGRATE = {
    "2.1": {"type": "object", "properties": {"migrate": {"type": ["object", "null"]}},
            "required": ["migrate"]},
    "2.56": _action("migrate", {"type": "object", "properties": {"host": _HOST},
                                "additionalProperties": False}, nullable=True),
}

_LIVE_2_1 = {"type": "object",
             "properties": {"block_migration": BOOLEAN, "disk_over_commit": BOOLEAN,
                            "host": _HOST},
             "required": ["block_migration", "disk_over_commit", "host"],
             "additionalProperties": False}
_LIVE_2_25 = {"type": "object",
              "properties": {"block_migration": {"oneOf": [BOOLEAN, {"enum": ["auto"]}]},
                             "host": _HOST},
              "required": ["block_migration", "host"], "additionalProperties": False}
_LIVE_2_30 = copy.deepcopy(_LIVE_2_25)
_LIVE_2_30["properties"]["force"] = BOOLEAN
LIVE_MIGRATE = {"2.1": _action("os-migrateLive", _LIVE_2_1),
                "2.25": _action("os-migrateLive", _LIVE_2_25),
                "2.30": _action("os-migrateLive", _LIVE_2_30),
                "2.68": _action("os-migrateLive", _LIVE_2_25)}  # 2.68: force removed

_FLAVOR_REF = {"type": ["string", "number"], "minLength": 1}
RESIZE = _action("resize", {"type": "object",
                            "properties": {"flavorRef": _FLAVOR_REF,
                                           "OS-DCF:diskConfig": {"type": "string",
                                                                 "enum": ["AUTO", "MANUAL"]}},
                            "required": ["flavorRef"], "additionalProperties": False})

CREATE_IMAGE = _action("createImage", {"type": "object",
                                       "properties": {"name": NAME, "metadata": METADATA},
                                       "required": ["name"], "additionalProperties": False})

_REBUILD_2_1: dict[str, Any] = {
    "type": "object",
    "properties": {
        "imageRef": {"type": "string", "minLength": 1},
        "name": NAME, "adminPass": {"type": "string"}, "metadata": METADATA,
        "preserve_ephemeral": BOOLEAN,
        "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
        "accessIPv4": {"type": "string", "format": "ipv4"},
        "accessIPv6": {"type": "string", "format": "ipv6"},
        "personality": {"type": "array"},
    },
    "required": ["imageRef"], "additionalProperties": False,
}
_REBUILD_2_19 = copy.deepcopy(_REBUILD_2_1)
_REBUILD_2_19["properties"]["description"] = DESCRIPTION
_REBUILD_2_54 = copy.deepcopy(_REBUILD_2_19)
_REBUILD_2_54["properties"]["key_name"] = {"type": ["string", "null"], "minLength": 1,
                                           "maxLength": 255}
_REBUILD_2_57 = copy.deepcopy(_REBUILD_2_54)
_REBUILD_2_57["properties"]["user_data"] = {"type": ["string", "null"], "format": "base64",
                                            "maxLength": 65535}
del _REBUILD_2_57["properties"]["personality"]
_REBUILD_2_63 = copy.deepcopy(_REBUILD_2_57)
_REBUILD_2_63["properties"]["trusted_image_certificates"] = TRUSTED_CERTS
_REBUILD_2_90 = copy.deepcopy(_REBUILD_2_63)
_REBUILD_2_90["properties"]["hostname"] = HOSTNAME
_REBUILD_2_94 = copy.deepcopy(_REBUILD_2_63)
_REBUILD_2_94["properties"]["hostname"] = FQDN
REBUILD = {"2.1": _action("rebuild", _REBUILD_2_1), "2.19": _action("rebuild", _REBUILD_2_19),
           "2.54": _action("rebuild", _REBUILD_2_54), "2.57": _action("rebuild", _REBUILD_2_57),
           "2.63": _action("rebuild", _REBUILD_2_63), "2.90": _action("rebuild", _REBUILD_2_90),
           "2.94": _action("rebuild", _REBUILD_2_94)}

RESCUE = _action("rescue", {"type": "object",
                            "properties": {"adminPass": {"type": "string"},
                                           "rescue_image_ref": {"type": "string",
                                                                "format": "uuid"}},
                            "additionalProperties": False}, nullable=True)

CONSOLE_OUTPUT = _action("os-getConsoleOutput", {
    "type": "object",
    "properties": {"length": {"type": ["integer", "string", "null"],
                              "pattern": "^-?[0-9]+$", "minimum": -1}},
    "additionalProperties": False})

VNC_CONSOLE = _action("os-getVNCConsole", {
    "type": "object", "properties": {"type": {"type": "string", "enum": ["novnc", "xvpvnc"]}},
    "required": ["type"], "additionalProperties": False})

_REMOTE_2_6 = {"type": "object",
               "properties": {"protocol": {"type": "string",
                                           "enum": ["vnc", "spice", "rdp", "serial"]},
                              "type": {"type": "string",
                                       "enum": ["novnc", "xvpvnc", "rdp-html5", "spice-html5",
                                                "serial"]}},
               "required": ["protocol", "type"], "additionalProperties": False}
_REMOTE_2_8 = copy.deepcopy(_REMOTE_2_6)
_REMOTE_2_8["properties"]["protocol"]["enum"].append("mks")
_REMOTE_2_8["properties"]["type"]["enum"].append("webmks")
_REMOTE_2_99 = copy.deepcopy(_REMOTE_2_8)
_REMOTE_2_99["properties"]["type"]["enum"].append("spice-direct")
REMOTE_CONSOLE = {"2.6": _action("remote_console", _REMOTE_2_6),
                  "2.8": _action("remote_console", _REMOTE_2_8),
                  "2.99": _action("remote_console", _REMOTE_2_99)}

RESET_STATE = _action("os-resetState", {
    "type": "object", "properties": {"state": {"type": "string", "enum": ["active", "error"]}},
    "required": ["state"], "additionalProperties": False})

CHANGE_PASSWORD = _action("changePassword", {
    "type": "object", "properties": {"adminPass": {"type": "string"}},
    "required": ["adminPass"], "additionalProperties": False})

CREATE_BACKUP = _action("createBackup", {
    "type": "object",
    "properties": {"name": NAME, "backup_type": {"type": "string"},
                   "rotation": {"type": ["integer", "string"], "pattern": "^[0-9]+$",
                                "minimum": 0},
                   "metadata": METADATA},
    "required": ["name", "backup_type", "rotation"], "additionalProperties": False})

# 2.77: unshelve names an availability zone (null or {} as before)
UNSHELVE_2_77 = _action("unshelve", {"type": "object", "properties": {
    "availability_zone": {"type": "string", "minLength": 1, "maxLength": 255}},
    "additionalProperties": False}, nullable=True)

# 2.91: a target host (admin), and a null zone unpins the server
UNSHELVE_2_91 = _action("unshelve", {"type": "object", "properties": {
    "availability_zone": {"type": ["string", "null"]}, "host": {"type": "string"}},
    "additionalProperties": False}, nullable=True)
UNSHELVE = {"2.77": UNSHELVE_2_77, "2.91": UNSHELVE_2_91}

_EVACUATE_2_1 = {"type": "object",
                 "properties": {"host": _HOST, "onSharedStorage": BOOLEAN,
                                "adminPass": {"type": "string"}},
                 "required": ["onSharedStorage"], "additionalProperties": False}
_EVACUATE_2_14 = copy.deepcopy(_EVACUATE_2_1)
del _EVACUATE_2_14["properties"]["onSharedStorage"]
del _EVACUATE_2_14["required"]
_EVACUATE_2_29 = copy.deepcopy(_EVACUATE_2_14)
_EVACUATE_2_29["properties"]["force"] = BOOLEAN
EVACUATE = {"2.1": _action("evacuate", _EVACUATE_2_1),
            "2.14": _action("evacuate", _EVACUATE_2_14),
            "2.29": _action("evacuate", _EVACUATE_2_29),
            "2.68": _action("evacuate", _EVACUATE_2_14)}  # 2.68: force removed
