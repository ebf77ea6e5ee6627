"""Placement's error codes and domain exceptions.

The code strings are part of the API (clients branch on them, from microversion 1.23):
never change one, never reuse one; add new ones at the end. Exceptions carry the HTTP
status and code; the placement renderer (stackling.common.errors.render_placement) writes
`{"errors": [{status, title, detail, code, request_id}]}`.
"""

from __future__ import annotations

from stackling.common import errors

# --------------------------------------------------------------------- codes (append only)
DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"

ALL_CODES = (DEFAULT, INVENTORY_INUSE, CONCURRENT_UPDATE, DUPLICATE_NAME, PROVIDER_IN_USE,
             PROVIDER_CANNOT_DELETE_PARENT, RESOURCE_PROVIDER_NOT_FOUND,
             ILLEGAL_DUPLICATE_QUERYPARAM, QUERYPARAM_BAD_VALUE, QUERYPARAM_MISSING_VALUE)


# --------------------------------------------------------------------- by status
class BadRequest(errors.BadRequest):
    code = DEFAULT


class Forbidden(errors.Forbidden):
    code = DEFAULT
    message = "Policy does not allow %(action)s to be performed."


class NotFound(errors.NotFound):
    code = DEFAULT


class MethodNotAllowed(errors.MethodNotAllowed):
    code = DEFAULT


class NotAcceptable(errors.NotAcceptable):
    code = DEFAULT
    message = "Only application/json is provided"


class Conflict(errors.Conflict):
    code = DEFAULT


class UnsupportedMediaType(errors.ApiError):
    status = 415
    code = DEFAULT
    message = "The media type %(bad)s is not supported, use application/json"


# --------------------------------------------------------------------- query strings
class QueryDuplicateKey(BadRequest):
    code = ILLEGAL_DUPLICATE_QUERYPARAM


class QueryBadValue(BadRequest):
    code = QUERYPARAM_BAD_VALUE


class QueryMissingValue(BadRequest):
    code = QUERYPARAM_MISSING_VALUE


# --------------------------------------------------------------------- domain errors
class ResourceProviderNotFound(NotFound):
    message = "No resource provider with uuid %(uuid)s found"


class InventoryNotFound(NotFound):
    message = "No inventory of class %(resource_class)s for %(rp_uuid)s"


class ResourceClassNotFound(NotFound):
    message = "No such resource class %(resource_class)s."


class TraitNotFound(NotFound):
    message = "No such trait(s): %(names)s."


class DuplicateName(Conflict):
    code = DUPLICATE_NAME


class ProviderInUse(Conflict):
    code = PROVIDER_IN_USE


class CannotDeleteParent(Conflict):
    code = PROVIDER_CANNOT_DELETE_PARENT
    message = ("Unable to delete parent resource provider %(uuid)s: It has child resource "
               "providers.")


class InventoryInUse(Conflict):
    code = INVENTORY_INUSE
    # Nova's report client matches this sentence (_RE_INV_IN_USE): keep it.
    message = "Inventory for '%(resource_classes)s' on resource provider '%(resource_provider)s' in use."


class InUse(Conflict):
    """A resource class or trait still referenced."""


class ClaimFailed(Conflict):
    """An allocation write lost: no room, a constraint, or a concurrent change.

    The one exception a caller of `interface.claim_resources` catches to reschedule.
    """


class ConcurrentUpdate(ClaimFailed):
    code = CONCURRENT_UPDATE
    message = "Another thread concurrently updated the data. Please retry your update"


class InvalidAllocation(ClaimFailed):
    """Inventory missing for the class, capacity exceeded or unit constraints violated."""

    message = ("Unable to allocate inventory: Inventory for '%(resource_class)s' on "
               "resource provider '%(resource_provider)s' invalid.")


class CapacityExceeded(InvalidAllocation):
    message = ("Unable to allocate inventory: Unable to create allocation for "
               "'%(resource_class)s' on resource provider '%(resource_provider)s'. "
               "The requested amount would exceed the capacity.")


class ConstraintsViolated(InvalidAllocation):
    message = ("Unable to allocate inventory: Unable to create allocation for "
               "'%(resource_class)s' on resource provider '%(resource_provider)s'. "
               "The requested amount would violate inventory constraints.")
