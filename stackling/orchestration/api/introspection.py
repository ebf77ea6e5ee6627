"""What the engine offers, beyond types and versions: the engine services (admin) and a
starting template for a resource type (`GET /resource_types/{type}/template`)."""

from __future__ import annotations

import json
from typing import Any

from stackling.common.db import utcnow
from stackling.common.http import ApiRequest
from stackling.orchestration import worker
from stackling.orchestration.api.common import authorize, resource_class
from stackling.orchestration.errors import BadRequest
from stackling.orchestration.views import ts

# a property's type -> the parameter type a generated template declares for it
PARAM_TYPES = {"string": "string", "integer": "number", "number": "number",
               "boolean": "boolean", "map": "json", "list": "comma_delimited_list",
               "any": "json"}


def services(rq: ApiRequest) -> Any:
    """Heat's engine services: here, this process's engine (admin only, as upstream)."""
    authorize(rq, "service:index")
    now = ts(utcnow())
    running = rq.runtime.state.get("orchestration.worker") is not None
    return {"services": [{
        "id": worker.OWNER, "host": worker.HOST, "hostname": worker.HOST,
        "binary": "heat-engine", "engine_id": worker.OWNER, "topic": "engine",
        "report_interval": 60, "status": "up" if running else "down",
        "created_at": now, "updated_at": now, "deleted_at": None}]}


def type_template(rq: ApiRequest) -> Any:
    authorize(rq, "resource_types:template")
    cls = resource_class(rq)
    kind = rq.query.get("template_type") or "cfn"
    if kind not in ("cfn", "hot"):
        raise BadRequest(f"Template type is not supported: {kind}")
    return resource_template(rq.path_params["type_name"], cls, kind)


def resource_template(type_name: str, cls: Any, kind: str) -> dict[str, Any]:
    """Every property a parameter, every attribute an output, as upstream generates."""
    hot = kind == "hot"
    res = type_name.rsplit("::", 1)[-1]
    params: dict[str, Any] = {}
    props: dict[str, Any] = {}
    for key, prop in cls.properties_schema.items():
        param: dict[str, Any] = {"type": PARAM_TYPES.get(prop.type, "string"),
                                 "description": prop.description}
        if prop.default is not None:
            default = prop.default
            if prop.type == "list" and isinstance(default, list):
                default = ",".join(str(v) for v in default)
            elif prop.type in ("map", "any") and not isinstance(default, str):
                default = json.dumps(default)
            param["default"] = default
        if not hot:
            param = {k.capitalize(): v for k, v in param.items()}
            param["Type"] = {"string": "String", "number": "Number", "boolean": "Boolean",
                             "json": "Json", "comma_delimited_list": "CommaDelimitedList"
                             }[param["Type"]]
        params[key] = param
        props[key] = {"get_param": key} if hot else {"Ref": key}
    attrs = dict(cls.attributes_schema)
    attrs["show"] = "Detailed information about resource."
    if hot:
        return {"heat_template_version": "2016-10-14",
                "description": f"Initial template of {res}", "parameters": params,
                "resources": {res: {"type": type_name, "properties": props}},
                "outputs": {a: {"description": d, "value": {"get_attr": [res, a]}}
                            for a, d in attrs.items()}}
    return {"HeatTemplateFormatVersion": "2012-12-12",
            "Description": f"Initial template of {res}", "Parameters": params,
            "Resources": {res: {"Type": type_name, "Properties": props}},
            "Outputs": {a: {"Description": d, "Value": {"Fn::GetAtt": [res, a]}}
                        for a, d in attrs.items()}}
