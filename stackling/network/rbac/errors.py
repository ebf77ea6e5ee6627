"""RBAC policy and address scope exceptions, by their upstream names and messages."""

from __future__ import annotations

from stackling.network import errors


class RbacPolicyNotFound(errors.NotFound):
    message = "RBAC policy of type %(object_type)s with ID %(id)s not found"


class DuplicateRbacPolicy(errors.Conflict):
    message = "An RBAC policy already exists with those values."


class RbacPolicyInUse(errors.Conflict):
    message = ("RBAC policy on object %(object_id)s cannot be removed because other objects "
               "depend on it.\nDetails: %(details)s")


class InvalidActionForType(errors.InvalidInput):
    message = ("Invalid action '%(action)s' for object type '%(object_type)s'. Valid actions: "
               "%(valid_actions)s")


class AddressScopeNotFound(errors.NotFound):
    message = "Address scope %(address_scope_id)s could not be found"


class AddressScopeInUse(errors.InUse):
    message = ("Unable to complete operation on address scope %(address_scope_id)s. There are "
               "one or more subnet pools in use on the address scope")


class AddressScopeUpdateError(errors.BadRequest):
    error_type = "AddressScopeUpdateError"
    message = "Unable to update address scope %(address_scope_id)s : %(reason)s"


class AddressScopePrefixConflict(errors.Conflict):
    message = ("Failed to associate address scope: subnetpools within an address scope must "
               "have unique prefixes.")


class IllegalSubnetPoolAssociationToAddressScope(errors.BadRequest):
    error_type = "IllegalSubnetPoolAssociationToAddressScope"
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s cannot be "
               "associated with address scope %(address_scope_id)s.")


class IllegalSubnetPoolIpVersionAssociationToAddressScope(errors.BadRequest):
    error_type = "IllegalSubnetPoolIpVersionAssociationToAddressScope"
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s cannot associate "
               "with address scope %(address_scope_id)s because subnetpool ip_version is not "
               "%(ip_version)s.")
