"""Glance routes for discovery of import methods and stores, and the glance-direct import."""

from __future__ import annotations

from typing import Any

from stackling.common.db import utcnow
from stackling.common.errors import Forbidden, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.image import importing, logic, policy, stores


def _image(rq: ApiRequest, action: str) -> Any:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    rq.authorize(action, policy.target(image), exc=Forbidden(
        f"You are not authorized to complete {action} action."))
    return image


def _data_dir(rq: ApiRequest) -> Any:
    from pathlib import Path

    return Path(rq.settings.data_dir) / "images"


def info_import(rq: ApiRequest) -> Any:
    return importing.import_info(stores.configured(rq.settings))


def info_stores(rq: ApiRequest) -> Any:
    return importing.stores_info(stores.configured(rq.settings))


def info_stores_detail(rq: ApiRequest) -> Any:
    configured = stores.configured(rq.settings)
    if not configured.multi:
        raise NotFound("Multi backend is not supported at this site.")
    rq.authorize("stores_info_detail", {}, exc=Forbidden(
        "You are not authorized to complete stores_info_detail action."))
    return {"stores": configured.detail(_data_dir(rq))}


def delete_from_store(rq: ApiRequest) -> Any:
    configured = stores.configured(rq.settings)
    if not configured.multi:
        raise NotFound()
    image = _image(rq, "delete_image_location")
    stores.delete_from_store(_data_dir(rq), configured, image, rq.path_params["store_id"])
    image.updated_at = utcnow()
    rq.db.flush()
    return no_content()


def stage(rq: ApiRequest) -> Any:
    image = _image(rq, "upload_image")
    importing.stage(rq.db, rq.ctx, image.id, rq.body_stream or [rq.raw_body], _data_dir(rq))
    return no_content()


def import_image(rq: ApiRequest) -> Any:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    body = rq.json(malformed="Malformed JSON in request body.")
    configured = stores.configured(rq.settings)
    req = importing.parse_import_body(body, configured,
                                      rq.headers.get("x-image-meta-store") if configured.multi
                                      else None)
    # Glance: copying an image's data is an admin's (copy_image); any other import writes
    # the image (modify_image).
    action = "copy_image" if req.method == "copy-image" else "modify_image"
    rq.authorize(action, policy.target(image), exc=Forbidden(
        f"You are not authorized to complete {action} action."))
    if req.method == "web-download":
        importing.import_web_download(rq.db, rq.ctx, image.id, body, _data_dir(rq),
                                      rq.settings.image, rq.settings.http.image_size_cap,
                                      configured, req)
    elif req.method == "copy-image":
        importing.copy_image(rq.db, rq.ctx, image.id, req, _data_dir(rq), configured)
    else:
        importing.import_image(rq.db, rq.ctx, image.id, req, _data_dir(rq), configured)
    return 202, None


def add_routes(s: Service) -> None:
    s.add("/v2/info/import", get=info_import)
    s.add("/v2/info/stores", get=info_stores)
    s.add("/v2/info/stores/detail", get=info_stores_detail)
    s.add("/v2/stores/{store_id}/{image_id}", delete=delete_from_store)
    s.add("/v2/images/{image_id}/stage", stream=True, put=stage)  # never buffered
    s.add("/v2/images/{image_id}/import", post=import_image)
