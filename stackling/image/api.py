"""Glance v2 routes (minimal): version discovery, images CRUD, JSON-patch, data upload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.responses import Response, StreamingResponse

from stackling.common.errors import ApiError, BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest, Service, json_response, no_content
from stackling.common.listing import parse_list_params
from stackling.image import download, logic, policy
from stackling.image.models import Image

PATCH_TYPE = "application/openstack-images-v2.1-json-patch"
CURRENT = "v2.9"


class UnsupportedMediaType(ApiError):
    status = 415
    message = "Unsupported Content-Type"


def _time(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def image_view(image: Image) -> dict[str, Any]:
    view: dict[str, Any] = dict(image.properties or {})
    view.update({
        "id": image.id, "name": image.name, "status": image.status,
        "visibility": image.visibility, "protected": image.protected,
        "os_hidden": image.os_hidden, "checksum": image.checksum,
        "os_hash_algo": image.os_hash_algo, "os_hash_value": image.os_hash_value,
        "owner": image.owner, "size": image.size, "virtual_size": image.virtual_size,
        "min_ram": image.min_ram, "min_disk": image.min_disk,
        "disk_format": image.disk_format, "container_format": image.container_format,
        "created_at": _time(image.created_at), "updated_at": _time(image.updated_at),
        "tags": list(image.tags or []), "self": f"/v2/images/{image.id}",
        "file": f"/v2/images/{image.id}/file", "schema": "/v2/schemas/image",
    })
    if image.stores:  # multi-store only (stores.py)
        view["stores"] = ",".join(image.stores)
    return view


def _data_dir(rq: ApiRequest) -> Path:
    return Path(rq.settings.data_dir) / "images"


# ------------------------------------------------------------------ discovery
def _versions(rq: ApiRequest) -> dict[str, Any]:
    href = f"{rq.service_url}/v2/"
    minors = [CURRENT] + [f"v2.{n}" for n in range(int(CURRENT[3:]) - 1, -1, -1)]
    return {"versions": [{"id": v, "status": "CURRENT" if v == CURRENT else "SUPPORTED",
                          "links": [{"rel": "self", "href": href}]} for v in minors]}


def versions(rq: ApiRequest) -> Any:
    return json_response(_versions(rq), 300)


def versions_list(rq: ApiRequest) -> Any:
    return _versions(rq)


# ------------------------------------------------------------------ policy
def _authorize(rq: ApiRequest, action: str, image: Image | None = None) -> None:
    """Glance's check: the target is the image (its owner and visibility)."""
    target = policy.target(image) if image is not None else None
    rq.authorize(action, target, exc=Forbidden(
        f"You are not authorized to complete {action} action."))


def _authorize_visibility(rq: ApiRequest, visibility: Any, image: Image | None = None) -> None:
    if visibility == "public":
        _authorize(rq, "publicize_image", image)
    elif visibility == "community":
        _authorize(rq, "communitize_image", image)


def _image(rq: ApiRequest, action: str) -> Image:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    _authorize(rq, action, image)
    return image


# ------------------------------------------------------------------ images
def list_images(rq: ApiRequest) -> Any:
    _authorize(rq, "get_images")
    params = parse_list_params(rq.query, filterable=None, sortable=("created_at", "name",
                                                                     "updated_at", "size",
                                                                     "status"),
                               ignored=("sort",))
    if params.limit is None:
        params.limit = 25
    if not params.sorts:
        params.sorts = [("created_at", False)]  # Glance's default: newest first
    filters = {k: v[-1] for k, v in params.filters.items()}
    try:
        page = logic.list_images(rq.db, rq.ctx, filters, params)
    except logic.ImageNotFound:
        raise BadRequest(f"marker {params.marker} could not be found.") from None
    body: dict[str, Any] = {"images": [image_view(i) for i in page.rows],
                            "first": "/v2/images", "schema": "/v2/schemas/images"}
    if page.has_more and page.rows:
        query = [(k, v) for k, v in rq.query.multi_items() if k != "marker"]
        query.append(("marker", page.rows[-1].id))
        body["next"] = "/v2/images?" + "&".join(f"{k}={v}" for k, v in query)
    return body


def _body(rq: ApiRequest) -> Any:
    body = rq.json(malformed="Malformed JSON in request body.", required=False)
    return {} if body is None else body


def create_image(rq: ApiRequest) -> Any:
    body = _body(rq)
    if not isinstance(body, dict):
        raise BadRequest("Malformed JSON in request body.")
    _authorize(rq, "add_image")
    _authorize_visibility(rq, body.get("visibility"))
    image = logic.create_image(rq.db, rq.ctx, body)
    from stackling.image import importing, stores

    # As Glance: the create response names the enabled import methods and stores.
    return 201, image_view(image), {"Location": f"{rq.service_url}/v2/images/{image.id}",
                                    **importing.create_headers(stores.configured(rq.settings))}


def show_image(rq: ApiRequest) -> Any:
    return image_view(_image(rq, "get_image"))


def update_image(rq: ApiRequest) -> Any:
    ctype = rq.headers.get("content-type", "").split(";")[0].strip()
    if ctype != PATCH_TYPE:
        raise UnsupportedMediaType(headers={"Accept-Patch": PATCH_TYPE})
    changes = _body(rq)
    if not isinstance(changes, list):
        raise BadRequest("Request body must be a JSON array of operation objects.")
    image = _image(rq, "modify_image")
    for change in changes:
        if isinstance(change, dict) and str(change.get("path", "")).lstrip("/") == "visibility":
            _authorize_visibility(rq, change.get("value"), image)
    return image_view(logic.patch_image(rq.db, rq.ctx, image.id, changes))


def delete_image(rq: ApiRequest) -> Any:
    image = _image(rq, "delete_image")
    logic.delete_image(rq.db, rq.ctx, image.id, _data_dir(rq))
    from stackling.image import importing

    importing.discard_staged(_data_dir(rq), image.id)
    return no_content()


def upload_file(rq: ApiRequest) -> Any:
    image = _image(rq, "upload_image")
    from stackling.image import stores

    configured = stores.configured(rq.settings)
    target = None
    if configured.multi:  # `X-Image-Meta-Store` picks the store (checked before the data)
        target = configured.check(rq.headers.get("x-image-meta-store", configured.default))
    logic.upload_image(rq.db, rq.ctx, image.id, rq.body_stream or [rq.raw_body], _data_dir(rq))
    if target is not None:
        stores.place(_data_dir(rq), configured, image, _data_dir(rq) / image.id, [target])
        rq.db.flush()
    return no_content()


def download_file(rq: ApiRequest) -> Any:
    """The data streamed from disk a chunk at a time, whole or one range (image/download.py)."""
    image = _image(rq, "download_image")
    if image.status == "deactivated" and not rq.ctx.is_admin:
        raise Forbidden("The requested image has been deactivated. Image data download is "
                        "prohibited.")
    from stackling.image import stores

    fh = logic.open_image_data(rq.db, rq.ctx, image.id, _data_dir(rq),
                               stores.configured(rq.settings))
    if fh is None:
        return no_content()
    size = download.file_size(fh)
    try:
        wanted = download.requested_range(rq.headers.get("range"), rq.headers.get("content-range"),
                                          size)
    except ApiError:
        fh.close()
        raise
    offset, length = wanted or (0, size)
    headers = {"Content-Length": str(length)}
    if image.checksum:
        headers["Content-MD5"] = image.checksum
    if wanted is not None:
        headers["Content-Range"] = f"bytes {offset}-{offset + length - 1}/{size}"
    status = 206 if wanted else 200
    if rq.method == "HEAD":  # the headers only: no need to read the file
        fh.close()
        return Response(status_code=status, headers=headers, media_type="application/octet-stream")
    return StreamingResponse(download.chunks(fh, offset, length), status_code=status,
                             headers=headers, media_type="application/octet-stream")


def add_tag(rq: ApiRequest) -> Any:
    image = _image(rq, "modify_image")
    logic.add_tag(rq.db, rq.ctx, image.id, rq.path_params["tag"])
    return no_content()


def delete_tag(rq: ApiRequest) -> Any:
    image = _image(rq, "modify_image")
    logic.delete_tag(rq.db, rq.ctx, image.id, rq.path_params["tag"])
    return no_content()


def schema_image(rq: ApiRequest) -> Any:
    return {"name": "image", "properties": {k: {} for k in (
        "id", "name", "status", "visibility", "protected", "checksum", "owner", "size",
        "min_ram", "min_disk", "disk_format", "container_format", "created_at",
        "updated_at", "tags", "self", "file", "schema")}, "additionalProperties": {
        "type": "string"}}


def schema_images(rq: ApiRequest) -> Any:
    """The list's schema: its `images` are items of the image schema, with its links."""
    return {"name": "images", "properties": {
        "images": {"type": "array", "items": schema_image(rq)},
        "schema": {"type": "string"}, "first": {"type": "string"},
        "next": {"type": "string"}}, "links": [
        {"rel": "first", "href": "{first}"}, {"rel": "next", "href": "{next}"},
        {"rel": "describedby", "href": "{schema}"}]}


def not_found(rq: ApiRequest) -> Any:
    raise NotFound()


def build(runtime: Any) -> Service:
    s = Service(name="image", prefix="/image", family="image")
    s.add("/", public=True, get=versions)
    s.add("/versions", public=True, get=versions_list)
    s.add("/v2/images", get=list_images, post=create_image)
    s.add("/v2/images/{image_id}", get=show_image, patch=update_image, delete=delete_image)
    s.add("/v2/images/{image_id}/file", get=download_file)
    s.add("/v2/images/{image_id}/file", stream=True, put=upload_file)  # never buffered
    s.add("/v2/images/{image_id}/tags/{tag}", put=add_tag, delete=delete_tag)
    s.add("/v2/schemas/image", get=schema_image)
    s.add("/v2/schemas/images", get=schema_images)
    from stackling.image import import_api

    import_api.add_routes(s)
    from stackling.image import members_api, metadefs_api, tasks_api

    members_api.add_routes(s)
    tasks_api.add_routes(s)
    metadefs_api.add_routes(s)
    return s
