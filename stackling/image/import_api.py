"""Glance routes for discovery of import methods and stores, and the glance-direct import."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import Forbidden
from stackling.common.http import ApiRequest, Service, no_content
from stackling.image import importing, logic, policy


def _image(rq: ApiRequest, action: str) -> Any:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    rq.authorize(action, policy.target(image), exc=Forbidden(
        f"You are not authorized to complete {action} action."))
    return image


def _data_dir(rq: ApiRequest) -> Any:
    from pathlib import Path

    return Path(rq.settings.data_dir) / "images"


def info_import(rq: ApiRequest) -> Any:
    return importing.import_info()


def info_stores(rq: ApiRequest) -> Any:
    return importing.stores_info()


def stage(rq: ApiRequest) -> Any:
    image = _image(rq, "upload_image")
    importing.stage(rq.db, rq.ctx, image.id, rq.body_stream or [rq.raw_body], _data_dir(rq))
    return no_content()


def import_image(rq: ApiRequest) -> Any:
    image = _image(rq, "modify_image")
    body = rq.json(malformed="Malformed JSON in request body.")
    method = importing.parse_import_body(body)
    if method == "web-download":
        importing.import_web_download(rq.db, rq.ctx, image.id, body, _data_dir(rq),
                                      rq.settings.image, rq.settings.http.image_size_cap)
    else:
        importing.import_image(rq.db, rq.ctx, image.id, method, _data_dir(rq))
    return 202, None


def add_routes(s: Service) -> None:
    s.add("/v2/info/import", get=info_import)
    s.add("/v2/info/stores", get=info_stores)
    s.add("/v2/images/{image_id}/stage", stream=True, put=stage)  # never buffered
    s.add("/v2/images/{image_id}/import", post=import_image)
