"""Domain errors shared by every service, and one body renderer per service family.

Logic raises `ApiError` subclasses; the HTTP layer renders them in the family's own
format. Services subclass these to carry upstream names (Neutron's `type` is the class
name unless `error_type` is set; Placement's stable `code` strings live in its errors.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

STATUS_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    408: "Request Timeout",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    416: "Request Range Not Satisfiable",
    429: "Too Many Requests",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}


class ApiError(Exception):
    status: ClassVar[int] = 500
    # Default message, formatted with the keyword arguments given to the constructor.
    message: ClassVar[str] = "An unknown exception occurred."
    error_type: ClassVar[str | None] = None  # Neutron `type`; None means the class name
    code: ClassVar[str | None] = None  # Placement error code

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.message % kwargs if kwargs else self.message
            except (KeyError, TypeError, ValueError):
                message = self.message
        self.text = message
        self.headers: dict[str, str] = kwargs.pop("headers", None) or {}
        self.extra: dict[str, Any] = {}
        self.version: Any = None  # the request's microversion, set when rendered
        super().__init__(message)

    @property
    def type_name(self) -> str:
        return self.error_type or type(self).__name__

    @property
    def title(self) -> str:
        return STATUS_TITLES.get(self.status, "Error")


class BadRequest(ApiError):
    status = 400
    message = "Bad request."


class Unauthorized(ApiError):
    status = 401
    message = "The request you have made requires authentication."


class Forbidden(ApiError):
    status = 403
    message = "You are not authorized to perform the requested action."


class PolicyNotAuthorized(Forbidden):
    message = "rule:%(action)s is disallowed by policy"


class NotFound(ApiError):
    status = 404
    message = "The resource could not be found."


class MethodNotAllowed(ApiError):
    status = 405
    message = "The method is not allowed for the requested URL."


class NotAcceptable(ApiError):
    status = 406
    message = "Not acceptable."


class Conflict(ApiError):
    status = 409
    message = "Conflict."


class PreconditionFailed(ApiError):
    status = 412
    message = "Precondition failed."


class ServiceUnavailable(ApiError):
    status = 503
    message = "Service unavailable."


class InternalError(ApiError):
    status = 500
    message = "An unexpected error prevented the server from fulfilling your request."


# --------------------------------------------------------------------------- renderers
# Each takes the error and the request id and returns (status, body).


def render_identity(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    return err.status, {"error": {"code": err.status, "title": err.title, "message": err.text}}


def render_network(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    if err.status == 501:
        return 501, {"NotImplementedError": {"type": "NotImplementedError",
                                              "message": err.text, "detail": ""}}
    return err.status, {"NeutronError": {"type": err.type_name, "message": err.text, "detail": ""}}


# Nova's fault keys by status (nova.api.openstack.wsgi.Fault).
COMPUTE_FAULT_NAMES = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    429: "overLimit",
    501: "notImplemented",
    503: "serviceUnavailable",
}


def render_compute(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    key = COMPUTE_FAULT_NAMES.get(err.status, "computeFault")
    return err.status, {key: {"code": err.status, "message": err.text}}


# webob's explanation per status: placement's `detail` is "<explanation>\n\n <message>  ".
PLACEMENT_EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed or "
         "otherwise incorrect.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: "The method specified is not allowed for this resource.",
    406: "The resource could not be generated that was acceptable to your browser.",
    409: "There was a conflict when trying to complete your request.",
    415: "The request media type is not supported by this server.",
    500: "The server has either erred or is incapable of performing the requested operation.",
}


def render_placement(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    explanation = PLACEMENT_EXPLANATIONS.get(err.status, err.title)
    message = " ".join(err.text.split("\n"))
    body: dict[str, Any] = {
        "status": err.status,
        "title": err.title,
        "detail": f"{explanation}\n\n {message}  ",
        "request_id": request_id,
    }
    # Error codes exist from microversion 1.23 (none when negotiation itself failed).
    version = err.version
    if version is not None and tuple(version) >= (1, 23):
        body["code"] = err.code or "placement.undefined_code"
    body.update(err.extra)
    return err.status, {"errors": [body]}


def render_image(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    # Glance answers webob-style errors; clients read only the status and message.
    return err.status, {"code": err.status, "title": err.title, "message": err.text}


def render_orchestration(err: ApiError, request_id: str) -> tuple[int, dict[str, Any]]:
    return err.status, {
        "code": err.status,
        "title": err.title,
        "explanation": err.text,
        "error": {"type": err.type_name, "message": err.text, "traceback": None},
    }


RENDERERS = {
    "identity": render_identity,
    "network": render_network,
    "compute": render_compute,
    "placement": render_placement,
    "image": render_image,
    "orchestration": render_orchestration,
}
