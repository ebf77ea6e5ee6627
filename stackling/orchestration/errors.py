"""Heat's exceptions, by upstream name: the error body's `type` is the class name."""

from __future__ import annotations

from stackling.common.errors import ApiError


class HeatError(ApiError):
    status = 500


class BadRequest(HeatError):
    status = 400
    error_type = "HTTPBadRequest"


class StackValidationFailed(HeatError):
    status = 400
    message = "%(message)s"


class InvalidTemplateVersion(HeatError):
    status = 400
    message = "The template version is invalid: %(explanation)s"


class InvalidTemplateSection(HeatError):
    status = 400
    message = "The template section is invalid: %(section)s"


class InvalidTemplateReference(HeatError):
    status = 400
    message = ('The specified reference "%(resource)s" (in %(key)s) is incorrect.')


class InvalidTemplateAttribute(HeatError):
    status = 400
    message = "The Referenced Attribute (%(resource)s %(key)s) is incorrect."


class UnknownUserParameter(HeatError):
    status = 400
    message = "The Parameter (%(key)s) was not defined in template."


class UserParameterMissing(HeatError):
    status = 400
    message = "The Parameter (%(key)s) was not provided."


class ImmutableParameterModified(HeatError):
    status = 400
    message = ("The following parameters are immutable and may not be updated: "
               "%(keys)s")


class ResourceTypeUnavailable(HeatError):
    status = 400
    message = "HEAT-E99001 Service %(service_name)s is not available for resource type " \
              "%(resource_type)s, reason: %(reason)s"


class NotSupported(HeatError):
    status = 400
    message = "%(feature)s is not supported."


class CircularDependencyException(HeatError):
    status = 400
    message = "Circular Dependency Found: %(cycle)s"


class ResourcePropertyConflict(HeatError):
    status = 400
    message = "Cannot define the following properties at the same time: %(props)s."


class EntityNotFound(HeatError):
    status = 404
    message = "The %(entity)s (%(name)s) could not be found."


class NotFound(HeatError):
    status = 404
    message = "%(message)s"


class StackExists(HeatError):
    status = 409
    message = 'The Stack (%(stack_name)s) already exists.'


class ActionInProgress(HeatError):
    status = 409
    message = "Stack %(stack_name)s already has an action (%(action)s) in progress."


class Forbidden(HeatError):
    status = 403
    message = "You are not authorized to use %(action)s."


class InvalidTenant(HeatError):
    status = 403
    message = 'Searching Tenant %(target)s from Tenant %(actual)s forbidden.'


class ResourceFailure(Exception):
    """A resource operation failed in the engine (not an API error): becomes the
    resource's and the stack's FAILED status reason."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ResourceTypeNotFound(StackValidationFailed):
    message = "The Resource Type (%(type_name)s) could not be found."

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)


class ResourceFailureKeep(ResourceFailure):
    """A failure that leaves the physical object behind (e.g. a server in ERROR): the
    handler's changes commit and the resource is FAILED with its physical id."""


class TemplateOutputError(HeatError):
    """A nested stack's output that failed, read through its parent resource."""

    status = 400
    message = "Error in %(resource)s output %(attribute)s: %(error)s"
