"""Request schemas, per resource and microversion: each version a deep copy of the
previous one plus its change, so version differences read as diffs."""

from __future__ import annotations

import copy
from typing import Any

MAX_INT = 2147483647
SQL_SP_FLOAT_MAX = 3.40282e38
UUID_PATTERN = "^[0-9a-fA-F-]{36}$"
RC_PATTERN = "^[A-Z0-9_]+$"
CUSTOM_PATTERN = "^CUSTOM_[A-Z0-9_]+$"
CONSUMER_TYPE_PATTERN = RC_PATTERN
GROUP_SUFFIX = r"[1-9][0-9]*"
GROUP_SUFFIX_1_33 = r"[a-zA-Z0-9_-]{1,64}"

Schema = dict[str, Any]

# ------------------------------------------------------------------ resource providers
POST_RESOURCE_PROVIDER: Schema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "uuid": {"type": "string", "format": "uuid"},
    },
    "required": ["name"],
    "additionalProperties": False,
}
POST_RESOURCE_PROVIDER_1_14 = copy.deepcopy(POST_RESOURCE_PROVIDER)
POST_RESOURCE_PROVIDER_1_14["properties"]["parent_provider_uuid"] = {
    "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}

PUT_RESOURCE_PROVIDER: Schema = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 200}},
    "required": ["name"],
    "additionalProperties": False,
}
PUT_RESOURCE_PROVIDER_1_14 = copy.deepcopy(PUT_RESOURCE_PROVIDER)
PUT_RESOURCE_PROVIDER_1_14["properties"]["parent_provider_uuid"] = {
    "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}

GET_RESOURCE_PROVIDERS: Schema = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "uuid": {"type": "string", "format": "uuid"},
    },
    "additionalProperties": False,
}
GET_RESOURCE_PROVIDERS_1_3 = copy.deepcopy(GET_RESOURCE_PROVIDERS)
GET_RESOURCE_PROVIDERS_1_3["properties"]["member_of"] = {"type": "string"}
GET_RESOURCE_PROVIDERS_1_4 = copy.deepcopy(GET_RESOURCE_PROVIDERS_1_3)
GET_RESOURCE_PROVIDERS_1_4["properties"]["resources"] = {"type": "string"}
GET_RESOURCE_PROVIDERS_1_14 = copy.deepcopy(GET_RESOURCE_PROVIDERS_1_4)
GET_RESOURCE_PROVIDERS_1_14["properties"]["in_tree"] = {"type": "string", "format": "uuid"}
GET_RESOURCE_PROVIDERS_1_18 = copy.deepcopy(GET_RESOURCE_PROVIDERS_1_14)
GET_RESOURCE_PROVIDERS_1_18["properties"]["required"] = {"type": "string"}

# ------------------------------------------------------------------ inventories
_INVENTORY_FIELDS: Schema = {
    "total": {"type": "integer", "maximum": MAX_INT, "minimum": 1},
    "reserved": {"type": "integer", "maximum": MAX_INT, "minimum": 0},
    "min_unit": {"type": "integer", "maximum": MAX_INT, "minimum": 1},
    "max_unit": {"type": "integer", "maximum": MAX_INT, "minimum": 1},
    "step_size": {"type": "integer", "maximum": MAX_INT, "minimum": 1},
    "allocation_ratio": {"type": "number", "maximum": SQL_SP_FLOAT_MAX},
}
BASE_INVENTORY: Schema = {
    "type": "object",
    "properties": {"resource_provider_generation": {"type": "integer"}, **_INVENTORY_FIELDS},
    "required": ["total", "resource_provider_generation"],
    "additionalProperties": False,
}
POST_INVENTORY = copy.deepcopy(BASE_INVENTORY)
POST_INVENTORY["properties"]["resource_class"] = {"type": "string", "pattern": RC_PATTERN}
POST_INVENTORY["required"] = ["total", "resource_class"]
PUT_INVENTORY_RECORD = copy.deepcopy(BASE_INVENTORY)
PUT_INVENTORY_RECORD["required"] = ["total"]
PUT_INVENTORIES: Schema = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        "inventories": {"type": "object",
                        "patternProperties": {RC_PATTERN: PUT_INVENTORY_RECORD},
                        "additionalProperties": False},
    },
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False,
}

# ------------------------------------------------------------------ aggregates
PUT_AGGREGATES: Schema = {
    "type": "array",
    "items": {"type": "string", "format": "uuid"},
    "uniqueItems": True,
}
PUT_AGGREGATES_1_19: Schema = {
    "type": "object",
    "properties": {"aggregates": PUT_AGGREGATES,
                   "resource_provider_generation": {"type": "integer"}},
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}

# ------------------------------------------------------------------ traits
SET_TRAITS_FOR_PROVIDER: Schema = {
    "type": "object",
    "properties": {
        "traits": {"type": "array", "items": {"type": "string", "pattern": RC_PATTERN}},
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}
LIST_TRAITS: Schema = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
    "additionalProperties": False,
}

# ------------------------------------------------------------------ resource classes
POST_RESOURCE_CLASS: Schema = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": CUSTOM_PATTERN, "maxLength": 255}},
    "required": ["name"],
    "additionalProperties": False,
}
PUT_RESOURCE_CLASS = POST_RESOURCE_CLASS

# ------------------------------------------------------------------ allocations
_RESOURCES: Schema = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {RC_PATTERN: {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}
ALLOCATION: Schema = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": {"type": "string", "format": "uuid"}},
                        "required": ["uuid"],
                        "additionalProperties": False,
                    },
                    "resources": _RESOURCES,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["allocations"],
    "additionalProperties": False,
}
_OWNER: Schema = {"type": "string", "minLength": 1, "maxLength": 255}
ALLOCATION_1_8 = copy.deepcopy(ALLOCATION)
ALLOCATION_1_8["properties"].update(project_id=_OWNER, user_id=_OWNER)
ALLOCATION_1_8["required"] += ["project_id", "user_id"]
ALLOCATION_1_12: Schema = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {UUID_PATTERN: {
                "type": "object",
                "properties": {"generation": {"type": "integer"}, "resources": _RESOURCES},
                "required": ["resources"],
                "additionalProperties": False,
            }},
            "additionalProperties": False,
        },
        "project_id": _OWNER,
        "user_id": _OWNER,
    },
    "required": ["allocations", "project_id", "user_id"],
    "additionalProperties": False,
}
DELETABLE_ALLOCATIONS = copy.deepcopy(ALLOCATION_1_12)
DELETABLE_ALLOCATIONS["properties"]["allocations"]["minProperties"] = 0
POST_ALLOCATIONS_1_13: Schema = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {UUID_PATTERN: DELETABLE_ALLOCATIONS},
    "additionalProperties": False,
}
ALLOCATION_1_28 = copy.deepcopy(DELETABLE_ALLOCATIONS)
ALLOCATION_1_28["properties"]["consumer_generation"] = {"type": ["integer", "null"]}
ALLOCATION_1_28["required"].append("consumer_generation")
POST_ALLOCATIONS_1_28 = copy.deepcopy(POST_ALLOCATIONS_1_13)
POST_ALLOCATIONS_1_28["patternProperties"] = {UUID_PATTERN: ALLOCATION_1_28}
_MAPPINGS: Schema = {
    "type": "object",
    "patternProperties": {f"^{GROUP_SUFFIX_1_33}$|^$": {
        "type": "array", "minItems": 1, "items": {"type": "string", "format": "uuid"}}},
}
ALLOCATION_1_34 = copy.deepcopy(ALLOCATION_1_28)
ALLOCATION_1_34["properties"]["mappings"] = _MAPPINGS
POST_ALLOCATIONS_1_34 = copy.deepcopy(POST_ALLOCATIONS_1_28)
POST_ALLOCATIONS_1_34["patternProperties"] = {UUID_PATTERN: ALLOCATION_1_34}
ALLOCATION_1_38 = copy.deepcopy(ALLOCATION_1_34)
ALLOCATION_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": CONSUMER_TYPE_PATTERN, "minLength": 1, "maxLength": 255}
ALLOCATION_1_38["required"].append("consumer_type")
POST_ALLOCATIONS_1_38 = copy.deepcopy(POST_ALLOCATIONS_1_34)
POST_ALLOCATIONS_1_38["patternProperties"] = {UUID_PATTERN: ALLOCATION_1_38}

# ------------------------------------------------------------------ usages
GET_USAGES: Schema = {
    "type": "object",
    "properties": {"project_id": {"type": "string", "minLength": 1, "maxLength": 255},
                   "user_id": {"type": "string", "minLength": 1, "maxLength": 255}},
    "required": ["project_id"],
    "additionalProperties": False,
}
GET_USAGES_1_38 = copy.deepcopy(GET_USAGES)
GET_USAGES_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": f"{CONSUMER_TYPE_PATTERN}|^all$|^unknown$",
    "minLength": 1, "maxLength": 255}

# ------------------------------------------------------------------ allocation candidates
GET_CANDIDATES_1_10: Schema = {
    "type": "object",
    "properties": {"resources": {"type": "string"}},
    "required": ["resources"],
    "additionalProperties": False,
}
GET_CANDIDATES_1_16 = copy.deepcopy(GET_CANDIDATES_1_10)
GET_CANDIDATES_1_16["properties"]["limit"] = {
    "type": ["integer", "string"], "pattern": "^[1-9][0-9]*$", "minimum": 1, "minLength": 1}
GET_CANDIDATES_1_17 = copy.deepcopy(GET_CANDIDATES_1_16)
GET_CANDIDATES_1_17["properties"]["required"] = {"type": ["string"]}
GET_CANDIDATES_1_21 = copy.deepcopy(GET_CANDIDATES_1_17)
GET_CANDIDATES_1_21["properties"]["member_of"] = {"type": ["string"]}
GET_CANDIDATES_1_25 = copy.deepcopy(GET_CANDIDATES_1_21)
for _key in ("resources", "required", "member_of"):
    del GET_CANDIDATES_1_25["properties"][_key]
del GET_CANDIDATES_1_25["required"]
GET_CANDIDATES_1_25["patternProperties"] = {
    f"^{prefix}({GROUP_SUFFIX})?$": {"type": "string"}
    for prefix in ("resources", "required", "member_of")}
GET_CANDIDATES_1_25["properties"]["group_policy"] = {"type": "string", "enum": ["none", "isolate"]}
GET_CANDIDATES_1_31 = copy.deepcopy(GET_CANDIDATES_1_25)
GET_CANDIDATES_1_31["patternProperties"][f"^in_tree({GROUP_SUFFIX})?$"] = {"type": "string"}
GET_CANDIDATES_1_33 = copy.deepcopy(GET_CANDIDATES_1_31)
GET_CANDIDATES_1_33["patternProperties"] = {
    f"^{prefix}({GROUP_SUFFIX_1_33})?$": {"type": "string"}
    for prefix in ("resources", "required", "member_of", "in_tree")}
GET_CANDIDATES_1_35 = copy.deepcopy(GET_CANDIDATES_1_33)
GET_CANDIDATES_1_35["properties"]["root_required"] = {"type": ["string"]}
GET_CANDIDATES_1_36 = copy.deepcopy(GET_CANDIDATES_1_35)
GET_CANDIDATES_1_36["properties"]["same_subtree"] = {"type": ["string"]}

# ------------------------------------------------------------------ reshaper
POST_RESHAPER_1_30: Schema = {
    "type": "object",
    "properties": {
        "inventories": {
            "type": "object",
            "patternProperties": {UUID_PATTERN: {
                "type": "object",
                "properties": {
                    "resource_provider_generation": {"type": "integer"},
                    "inventories": PUT_INVENTORIES["properties"]["inventories"],
                },
                "required": ["resource_provider_generation", "inventories"],
                "additionalProperties": False,
            }},
            "additionalProperties": False,
        },
        "allocations": POST_ALLOCATIONS_1_28,
    },
    "required": ["inventories", "allocations"],
    "additionalProperties": False,
}
POST_RESHAPER_1_34 = copy.deepcopy(POST_RESHAPER_1_30)
POST_RESHAPER_1_34["properties"]["allocations"] = POST_ALLOCATIONS_1_34
POST_RESHAPER_1_38 = copy.deepcopy(POST_RESHAPER_1_34)
POST_RESHAPER_1_38["properties"]["allocations"] = POST_ALLOCATIONS_1_38
