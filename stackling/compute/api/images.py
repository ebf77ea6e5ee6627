"""Nova's image proxy: `/images` and `/images/{id}/metadata`, below 2.36.

Nova answers these from Glance; here they read and write the image service through its
interface. From 2.36 on they are 404, as Nova's other proxy APIs. Nova checks no policy of
its own here (Glance's rules apply: only an image's owner, or an admin, changes it).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from stackling.common.errors import BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest, no_content
from stackling.compute.api.common import MAX_LIMIT, links, page_limit, version
from stackling.image import interface as images

PROXY_REMOVED = "2.36"
MAX_IMAGE_META = 128  # Nova's [quota] metadata_items, which bounds image metadata too
_STATUS = {"active": "ACTIVE", "queued": "SAVING", "saving": "SAVING", "deleted": "DELETED",
           "pending_delete": "DELETED", "killed": "ERROR"}
_PROGRESS = {"active": 100, "saving": 50, "queued": 25}
_BASE_KEYS = ("visibility", "disk_format", "container_format", "min_disk", "min_ram",
              "protected", "os_hidden", "tags", "name")


class ImageNotFound(NotFound):
    message = "Image not found."


def _guard(rq: ApiRequest) -> None:
    if version(rq).matches(PROXY_REMOVED):
        raise NotFound("The resource could not be found.")


def _get(rq: ApiRequest) -> Any:
    try:
        return images.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    except images.ImageNotFound:
        raise ImageNotFound() from None


def _time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def _links(rq: ApiRequest, image_id: str) -> list[dict[str, str]]:
    out = links(rq).pair("images", image_id)
    glance = rq.service_url.rsplit("/compute", 1)[0] + "/image"
    out.append({"rel": "alternate", "type": "application/vnd.openstack.image",
                "href": f"{glance}/images/{image_id}"})
    return out


def _basic(rq: ApiRequest, image: Any) -> dict[str, Any]:
    return {"id": image.id, "name": image.name, "links": _links(rq, image.id)}


def _detail(rq: ApiRequest, image: Any) -> dict[str, Any]:
    props = dict(image.properties or {})
    view = {**_basic(rq, image), "minRam": image.min_ram or 0, "minDisk": image.min_disk or 0,
            "metadata": props, "created": _time(image.created_at),
            "updated": _time(image.updated_at), "status": _STATUS.get(image.status, "UNKNOWN"),
            "progress": _PROGRESS.get(image.status, 0), "OS-EXT-IMG-SIZE:size": image.size}
    server = props.get("instance_uuid")
    if server:
        view["server"] = {"id": server, "links": links(rq).pair("servers", server)}
    return view


def _filters(rq: ApiRequest) -> dict[str, str]:
    """Nova's image list filters, as it passes them to Glance."""
    q = rq.query
    out: dict[str, str] = {}
    if q.get("name"):
        out["name"] = q["name"]
    if q.get("status"):
        out["status"] = q["status"].lower()
    if q.get("server"):
        out["instance_uuid"] = q["server"].rstrip("/").rsplit("/", 1)[-1]
    if q.get("type"):
        out["image_type"] = q["type"]
    return out


def _list(rq: ApiRequest, detailed: bool) -> Any:
    _guard(rq)
    marker = rq.query.get("marker")
    limit = page_limit(rq) or MAX_LIMIT  # an answer stays bounded (Nova's [api] max_limit)
    try:
        rows, _ = images.list_images(rq.db, rq.ctx, _filters(rq), limit=limit, marker=marker)
    except (BadRequest, images.ImageNotFound):
        raise BadRequest(f"marker [{marker}] not found") from None
    for key, attr in (("minRam", "min_ram"), ("minDisk", "min_disk")):
        if rq.query.get(key):
            try:
                floor = int(rq.query[key])
            except ValueError:
                raise BadRequest(f"Invalid {key} filter [{rq.query[key]}]") from None
            rows = [i for i in rows if (getattr(i, attr) or 0) >= floor]
    view = _detail if detailed else _basic
    out: dict[str, Any] = {"images": [view(rq, i) for i in rows]}
    if limit is not None and rows and len(rows) == limit:
        suffix = "/detail" if detailed else ""
        out["images_links"] = [{"rel": "next", "href": f"{links(rq).versioned}/images{suffix}"
                                f"?limit={limit}&marker={rows[-1].id}"}]
    return out


def index(rq: ApiRequest) -> Any:
    return _list(rq, False)


def detail(rq: ApiRequest) -> Any:
    return _list(rq, True)


def show(rq: ApiRequest) -> Any:
    _guard(rq)
    return {"image": _detail(rq, _get(rq))}


def delete(rq: ApiRequest) -> Any:
    _guard(rq)
    image = _get(rq)
    images.authorize(rq, "delete_image", image)
    images.delete_image(rq.db, rq.ctx, image.id)
    return no_content()


# ------------------------------------------------------------------ metadata
def _meta_body(rq: ApiRequest, key: str) -> dict[str, Any]:
    data = rq.json(malformed="Malformed request body")
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, dict):
        raise BadRequest("Malformed request body")
    for k, v in value.items():
        if not isinstance(k, str) or not 1 <= len(k) <= 255:
            raise BadRequest("Invalid input for field/attribute metadata key.")
        if not isinstance(v, str) or len(v) > 255:
            raise BadRequest(f"Invalid input for field/attribute {k}. Value: {v}.")
    return value


def _save(rq: ApiRequest, image: Any, props: dict[str, Any]) -> Any:
    images.authorize(rq, "modify_image", image)
    if len(props) > MAX_IMAGE_META:
        raise Forbidden("Quota exceeded for metadata items: too many image properties.")
    for key in props:
        if key in _BASE_KEYS:
            raise Forbidden(f"Attribute '{key}' is reserved.")
    return images.set_properties(rq.db, rq.ctx, image.id, props)


def metadata_index(rq: ApiRequest) -> Any:
    _guard(rq)
    return {"metadata": dict(_get(rq).properties or {})}


def metadata_create(rq: ApiRequest) -> Any:
    """POST: merged into the image's metadata."""
    _guard(rq)
    image = _get(rq)
    meta = _meta_body(rq, "metadata")
    image = _save(rq, image, {**(image.properties or {}), **meta})
    return {"metadata": dict(image.properties)}


def metadata_replace(rq: ApiRequest) -> Any:
    """PUT: the metadata replaced by the body's."""
    _guard(rq)
    image = _get(rq)
    meta = _meta_body(rq, "metadata")
    image = _save(rq, image, meta)
    return {"metadata": dict(image.properties)}


def metadata_show(rq: ApiRequest) -> Any:
    _guard(rq)
    props = _get(rq).properties or {}
    key = rq.path_params["key"]
    if key not in props:
        raise NotFound("The resource could not be found.")
    return {"meta": {key: props[key]}}


def metadata_put(rq: ApiRequest) -> Any:
    _guard(rq)
    image = _get(rq)
    key = rq.path_params["key"]
    meta = _meta_body(rq, "meta")
    if key not in meta:
        raise BadRequest("Request body and URI mismatch")
    if len(meta) > 1:
        raise BadRequest("Request body contains too many items")
    _save(rq, image, {**(image.properties or {}), key: meta[key]})
    return {"meta": {key: meta[key]}}


def metadata_delete(rq: ApiRequest) -> Any:
    _guard(rq)
    image = _get(rq)
    key = rq.path_params["key"]
    props = dict(image.properties or {})
    if key not in props:
        raise NotFound("Invalid metadata key")
    props.pop(key)
    _save(rq, image, props)
    return no_content()


def add_routes(s: Any) -> None:
    s.add("/v2.1/images", get=index)
    s.add("/v2.1/images/detail", get=detail)
    s.add("/v2.1/images/{image_id}", get=show, delete=delete)
    s.add("/v2.1/images/{image_id}/metadata", get=metadata_index, post=metadata_create,
          put=metadata_replace)
    s.add("/v2.1/images/{image_id}/metadata/{key}", get=metadata_show, put=metadata_put,
          delete=metadata_delete)
