"""/v3/types (extra specs, os-volume-type-access), /v3/qos-specs and /v3/default-types."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import errors, types
from stackling.block_storage.api.common import add, allowed, authorize, body, version
from stackling.block_storage.models import DefaultType, QosSpecs, VolumeType
from stackling.common.http import ApiRequest, Service, no_content
from stackling.common.listing import to_bool


def type_view(rq: ApiRequest, vtype: VolumeType) -> dict[str, Any]:
    v: dict[str, Any] = {"id": vtype.id, "name": vtype.name, "description": vtype.description,
                         "is_public": vtype.is_public,
                         "os-volume-type-access:is_public": vtype.is_public}
    if allowed(rq, "volume_extension:access_types_extra_specs"):
        v["extra_specs"] = dict(vtype.extra_specs or {})
    if allowed(rq, "volume_extension:access_types_qos_specs_id"):
        v["qos_specs_id"] = vtype.qos_specs_id
    return v


def _bool(value: Any, name: str) -> bool:
    try:
        return to_bool(value)
    except ValueError:
        raise errors.InvalidInput(reason=f"Invalid value '{value}' for {name}") from None


def list_types(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:type_get_all")
    raw = rq.query.get("is_public")
    is_public: bool | None = True
    if raw is not None:
        is_public = None if raw.lower() == "none" else _bool(raw, "is_public")
    elif rq.ctx.is_admin:
        is_public = None
    rows = types.list_types(rq.db, rq.ctx, is_public)
    wanted = rq.query.get("extra_specs")
    if wanted and version(rq, "3.52"):
        import ast

        try:
            specs = ast.literal_eval(wanted)
        except (ValueError, SyntaxError):
            raise errors.InvalidInput(reason="Invalid extra_specs filter") from None
        rows = [t for t in rows if all((t.extra_specs or {}).get(k) == v
                                       for k, v in dict(specs).items())]
    return {"volume_types": [type_view(rq, t) for t in rows]}


def show_type(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:type_get")
    ref = rq.path_params["type_id"]
    if ref == "default":
        return {"volume_type": type_view(rq, types.default_for(rq.db, rq.ctx.project_id or ""))}
    return {"volume_type": type_view(rq, types.get_type(rq.db, rq.ctx, ref))}


def create_type(rq: ApiRequest) -> Any:
    data = body(rq, "volume_type")
    authorize(rq, "volume_extension:type_create")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 255:
        raise errors.InvalidInput(reason="Volume type name can not be empty.")
    specs = data.get("extra_specs") or {}
    if not isinstance(specs, dict):
        raise errors.InvalidInput(reason="extra_specs must be a dict")
    is_public = _bool(data.get("os-volume-type-access:is_public",
                               data.get("is_public", True)), "is_public")
    vtype = types.create_type(rq.db, name.strip(), data.get("description"), is_public,
                              {str(k): str(v) for k, v in specs.items()})
    return {"volume_type": type_view(rq, vtype)}


def update_type(rq: ApiRequest) -> Any:
    data = body(rq, "volume_type")
    authorize(rq, "volume_extension:type_update")
    vtype = types.get_type(rq.db, rq.ctx, rq.path_params["type_id"])
    name = data.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise errors.InvalidInput(reason="Volume type name can not be empty.")
    is_public = data.get("is_public")
    if name is None and "description" not in data and is_public is None:
        raise errors.InvalidInput(reason="Specify volume type name, description, is_public "
                                  "or a combination thereof.")
    types.update_type(rq.db, vtype, name=name.strip() if name else None,
                      description=data.get("description"),
                      description_given="description" in data,
                      is_public=None if is_public is None else _bool(is_public, "is_public"))
    return {"volume_type": type_view(rq, vtype)}


def delete_type(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:type_delete")
    types.delete_type(rq.db, types.get_type(rq.db, rq.ctx, rq.path_params["type_id"]))
    return no_content(202)


# ------------------------------------------------------------------ extra specs
def _type(rq: ApiRequest) -> VolumeType:
    return types.get_type(rq.db, rq.ctx, rq.path_params["type_id"])


def list_specs(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:types_extra_specs:index")
    return {"extra_specs": dict(_type(rq).extra_specs or {})}


def create_specs(rq: ApiRequest) -> Any:
    data = body(rq, "extra_specs")
    authorize(rq, "volume_extension:types_extra_specs:create")
    for key, value in data.items():
        if not isinstance(key, str) or not key or len(key) > 255 or \
                isinstance(value, (dict, list)) or len(str(value)) > 255:
            raise errors.InvalidInput(reason="Invalid extra spec key or value")
    specs = {k: str(v) if not isinstance(v, bool) else str(v) for k, v in data.items()}
    types.set_extra_specs(rq.db, _type(rq), specs)
    return {"extra_specs": specs}


def show_spec(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:types_extra_specs:show")
    key = rq.path_params["key"]
    vtype = _type(rq)
    if key not in (vtype.extra_specs or {}):
        raise errors.VolumeTypeExtraSpecsNotFound(volume_type_id=vtype.id, extra_specs_key=key)
    return {key: vtype.extra_specs[key]}


def update_spec(rq: ApiRequest) -> Any:
    data = body(rq)
    authorize(rq, "volume_extension:types_extra_specs:update")
    key = rq.path_params["key"]
    if not isinstance(data, dict) or list(data) != [key]:
        raise errors.InvalidInput(reason="Request body and URI mismatch")
    types.set_extra_specs(rq.db, _type(rq), {key: str(data[key])})
    return {key: str(data[key])}


def delete_spec(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:types_extra_specs:delete")
    types.delete_extra_spec(rq.db, _type(rq), rq.path_params["key"])
    return no_content(202)


# ------------------------------------------------------------------ access
def list_access(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:volume_type_access:get_all_for_type")
    vtype = _type(rq)
    return {"volume_type_access": [{"volume_type_id": vtype.id, "project_id": p}
                                   for p in types.access_list(rq.db, vtype)]}


def type_action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.InvalidInput(reason="There is no such action")
    name, args = next(iter(data.items()))
    project = args.get("project") if isinstance(args, dict) else None
    if name not in ("addProjectAccess", "removeProjectAccess"):
        raise errors.InvalidInput(reason=f"There is no such action: {name}")
    authorize(rq, f"volume_extension:volume_type_access:{name}")
    if not project:
        raise errors.InvalidInput(reason="Missing required element 'project' in request body.")
    vtype = _type(rq)
    if name == "addProjectAccess":
        types.add_access(rq.db, vtype, str(project))
    else:
        types.remove_access(rq.db, vtype, str(project))
    return no_content(202)


# ------------------------------------------------------------------ QoS specs
def qos_view(qos: QosSpecs) -> dict[str, Any]:
    return {"id": qos.id, "name": qos.name, "consumer": qos.consumer,
            "specs": dict(qos.specs or {})}


def _qos_links(rq: ApiRequest, qos: QosSpecs) -> list[dict[str, str]]:
    base = rq.service_url
    return [{"href": f"{base}/v3/{rq.ctx.project_id}/qos-specs/{qos.id}", "rel": "self"},
            {"href": f"{base}/{rq.ctx.project_id}/qos-specs/{qos.id}", "rel": "bookmark"}]


def list_qos(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:get_all")
    return {"qos_specs": [qos_view(q) for q in types.list_qos(rq.db)]}


def create_qos(rq: ApiRequest) -> Any:
    data = body(rq, "qos_specs")
    authorize(rq, "volume_extension:qos_specs_manage:create")
    specs = dict(data)
    name = specs.pop("name", None)
    if not isinstance(name, str) or not name.strip():
        raise errors.InvalidInput(reason="Please specify a name for QoS specs.")
    qos = types.create_qos(rq.db, name.strip(), specs)
    return {"qos_specs": qos_view(qos), "links": _qos_links(rq, qos)}


def show_qos(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:get")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    return {"qos_specs": qos_view(qos), "links": _qos_links(rq, qos)}


def update_qos(rq: ApiRequest) -> Any:
    data = body(rq, "qos_specs")
    authorize(rq, "volume_extension:qos_specs_manage:update")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    return {"qos_specs": types.update_qos(rq.db, qos, data)}


def delete_qos(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:delete")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    force = (rq.query.get("force") or "").lower() in ("true", "1")
    types.delete_qos(rq.db, qos, force)
    return no_content(202)


def delete_qos_keys(rq: ApiRequest) -> Any:
    data = body(rq)
    authorize(rq, "volume_extension:qos_specs_manage:update")
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        raise errors.InvalidInput(reason="Missing required element 'keys' in request body.")
    types.unset_qos_keys(rq.db, types.get_qos(rq.db, rq.path_params["qos_id"]),
                         [str(k) for k in keys])
    return no_content(202)


def qos_associations(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:get")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    return {"qos_associations": [{"association_type": "volume_type", "name": t.name,
                                  "id": t.id} for t in types.qos_associations(rq.db, qos)]}


def qos_associate(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:update")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    type_id = rq.query.get("vol_type_id")
    if not type_id:
        raise errors.InvalidInput(reason="Volume Type id must not be None.")
    types.associate_qos(rq.db, rq.ctx, qos, type_id)
    return no_content(202)


def qos_disassociate(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:update")
    qos = types.get_qos(rq.db, rq.path_params["qos_id"])
    type_id = rq.query.get("vol_type_id")
    if not type_id:
        raise errors.InvalidInput(reason="Volume Type id must not be None.")
    types.disassociate_qos(rq.db, rq.ctx, qos, type_id)
    return no_content(202)


def qos_disassociate_all(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:qos_specs_manage:update")
    types.disassociate_qos(rq.db, rq.ctx, types.get_qos(rq.db, rq.path_params["qos_id"]), None)
    return no_content(202)


# ------------------------------------------------------------------ default types (3.62)
def _default_view(row: DefaultType) -> dict[str, Any]:
    return {"project_id": row.project_id, "volume_type_id": row.volume_type_id}


def _since_362(rq: ApiRequest) -> None:
    if not version(rq, "3.62"):
        raise errors.NotFound("The resource could not be found.")


def set_default(rq: ApiRequest) -> Any:
    _since_362(rq)
    data = body(rq, "default_type")
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:default_set_or_update", project)
    ref = data.get("volume_type")
    if not ref:
        raise errors.InvalidInput(reason="Missing required element 'volume_type'")
    return {"default_type": _default_view(types.set_default(rq.db, rq.ctx, project, str(ref)))}


def get_default(rq: ApiRequest) -> Any:
    _since_362(rq)
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:default_get", project)
    return {"default_type": _default_view(types.get_default(rq.db, project))}


def list_defaults(rq: ApiRequest) -> Any:
    _since_362(rq)
    authorize(rq, "volume_extension:default_get_all")
    return {"default_types": [_default_view(r) for r in types.list_defaults(rq.db)]}


def unset_default(rq: ApiRequest) -> Any:
    _since_362(rq)
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:default_unset", project)
    types.unset_default(rq.db, project)
    return no_content(204)


def register(service: Service) -> None:
    add(service, "/types", get=list_types, post=create_type)
    add(service, "/types/{type_id}", get=show_type, put=update_type, delete=delete_type)
    add(service, "/types/{type_id}/extra_specs", get=list_specs, post=create_specs)
    add(service, "/types/{type_id}/extra_specs/{key}", get=show_spec, put=update_spec,
        delete=delete_spec)
    add(service, "/types/{type_id}/os-volume-type-access", get=list_access)
    add(service, "/types/{type_id}/action", post=type_action)
    add(service, "/qos-specs", get=list_qos, post=create_qos)
    add(service, "/qos-specs/{qos_id}", get=show_qos, put=update_qos, delete=delete_qos)
    add(service, "/qos-specs/{qos_id}/delete_keys", put=delete_qos_keys)
    add(service, "/qos-specs/{qos_id}/associations", get=qos_associations)
    add(service, "/qos-specs/{qos_id}/associate", get=qos_associate)
    add(service, "/qos-specs/{qos_id}/disassociate", get=qos_disassociate)
    add(service, "/qos-specs/{qos_id}/disassociate_all", get=qos_disassociate_all)
    add(service, "/default-types", get=list_defaults)
    add(service, "/default-types/{target_project}", get=get_default, put=set_default,
        delete=unset_default)
