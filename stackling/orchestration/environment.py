"""The stack environment: parameters, parameter_defaults and the resource registry
(type aliases and template resources from `files`)."""

from __future__ import annotations

from typing import Any

from stackling.orchestration.errors import BadRequest, StackValidationFailed
from stackling.orchestration.template import parse_document

SECTIONS = ("parameters", "parameter_defaults", "resource_registry", "event_sinks",
            "parameter_merge_strategies", "encrypted_param_names")


def parse(env: Any) -> dict[str, Any]:
    doc = parse_document(env, "environment") if env not in (None, "") else {}
    for key in doc:
        if key not in SECTIONS:
            raise BadRequest(f'environment has wrong section "{key}"')
    for key in ("parameters", "parameter_defaults", "resource_registry"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise BadRequest(f'environment section "{key}" must be a map')
    per_resource = (doc.get("resource_registry") or {}).get("resources")
    if per_resource is not None and not (isinstance(per_resource, dict) and all(
            isinstance(v, dict) for v in per_resource.values())):
        raise BadRequest('environment section "resource_registry" "resources" must be a map '
                         "of maps")
    return {k: v for k, v in doc.items() if v is not None}


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            merged = dict(out[key])
            for k, v in value.items():
                if key == "resource_registry" and isinstance(v, dict) and isinstance(
                        merged.get(k), dict):
                    merged[k] = {**merged[k], **v}
                else:
                    merged[k] = v
            out[key] = merged
        else:
            out[key] = value
    return out


def build(environment: Any, files: dict[str, Any], environment_files: list[str] | None
          ) -> dict[str, Any]:
    """Environment files (in order, from `files`) merged, then the request's own."""
    env: dict[str, Any] = {}
    if environment_files is not None and not (isinstance(environment_files, list) and all(
            isinstance(n, str) for n in environment_files)):
        raise BadRequest("environment_files must be a list of file names")
    for name in environment_files or []:
        if name not in files:
            raise BadRequest(f"File {name} not found in the files section")
        env = merge(env, parse(files[name]))
    return merge(env, parse(environment))


def resolve_type(env: dict[str, Any], type_name: str, resource_name: str | None = None,
                 depth: int = 0) -> str:
    """The type after the registry's aliases: a registered type name or a template file
    name (a template resource)."""
    registry = env.get("resource_registry") or {}
    per_resource = (registry.get("resources") or {}).get(resource_name or "", {})
    if isinstance(per_resource, dict) and type_name in per_resource:
        target = per_resource[type_name]
    else:
        target = registry.get(type_name)
        if target is None:
            # Wildcards: "OS::Networking::*": "OS::Neutron::*"
            for key, value in registry.items():
                if isinstance(key, str) and key.endswith("*") and type_name.startswith(
                        key[:-1]) and isinstance(value, str) and value.endswith("*"):
                    target = value[:-1] + type_name[len(key) - 1:]
                    break
    if target is None or target == type_name or not isinstance(target, str):
        return type_name
    if depth > 10:
        raise StackValidationFailed(f"Resource type {type_name} is a loop in the registry")
    return resolve_type(env, target, resource_name, depth + 1)
