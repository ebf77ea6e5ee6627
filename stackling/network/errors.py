"""Neutron's exceptions, by their upstream names (the `type` in NeutronError bodies): the
core resources', then L3's (routers, floating IPs, auto-allocation, quotas), RBAC's and
address scopes', and the segments plugin's. One module for the service family.

Statuses follow neutron-lib's families: BadRequest/InvalidInput 400, NotAuthorized 403,
NotFound 404, Conflict/InUse 409, PreconditionFailed 412, ServiceUnavailable 503.
"""

from __future__ import annotations

from typing import Any

from stackling.common import errors


class BadRequest(errors.BadRequest):
    message = "Bad request."

    @property
    def type_name(self) -> str:
        # neutron's generic 400 is `HTTPBadRequest`; a named one is its class's name
        if self.error_type:
            return self.error_type
        return "HTTPBadRequest" if type(self) is BadRequest else type(self).__name__


class InvalidInput(errors.BadRequest):
    message = "Invalid input for operation: %(error_message)s."


class NotAuthorized(errors.Forbidden):
    message = "Not authorized."


class PolicyNotAuthorized(errors.PolicyNotAuthorized):
    message = "rule:%(action)s is disallowed by policy"


class HTTPNotFound(errors.NotFound):
    message = "The resource could not be found."


class NotFound(errors.NotFound):
    message = "An unknown exception occurred."


class Conflict(errors.Conflict):
    message = "An unknown exception occurred."


class InUse(errors.Conflict):
    message = "The resource is in use."


class ServiceUnavailable(errors.ServiceUnavailable):
    message = "The service is unavailable."


# ------------------------------------------------------------------ generic
class RevisionNumberConstraintFailed(errors.PreconditionFailed):
    message = "Constrained to %(expected)s, but current revision is %(current)s"


class TagNotFound(NotFound):
    message = "Tag %(tag)s could not be found."


# ------------------------------------------------------------------ networks
class NetworkNotFound(NotFound):
    message = "Network %(net_id)s could not be found."


class NetworkInUse(InUse):
    message = ("Unable to complete operation on network %(net_id)s. There are one or more "
               "ports still in use on the network.")


class DefaultExternalNetworkExists(Conflict):
    message = "Default external network %(net_id)s already exists."


class ExternalNetworkInUse(InUse):
    message = ("External network %(net_id)s cannot be updated to be made non-external, "
               "since it has existing gateway ports.")


class InvalidSharedSetting(Conflict):
    message = ("Unable to reconfigure sharing settings for network %(network)s. Multiple "
               "tenants are using it.")


class NoNetworkAvailable(errors.ServiceUnavailable):
    message = "Unable to create the network. No tenant network is available for allocation."


class VlanIdInUse(InUse):
    message = ("Unable to create the network. The VLAN %(vlan_id)s on physical network "
               "%(physical_network)s is in use.")


class TunnelIdInUse(InUse):
    message = "Unable to create the network. The tunnel ID %(tunnel_id)s is in use."


class FlatNetworkInUse(InUse):
    message = ("Unable to create the flat network. Physical network %(physical_network)s "
               "is in use.")


class SegmentationIdInUse(InUse):
    message = "Segmentation ID %(segmentation_id)s is in use."


class SegmentsSetInConjunctionWithProviders(InvalidInput):
    message = "Segments and provider values cannot both be set."


class SegmentsContainDuplicateEntry(InvalidInput):
    message = "Duplicate segment entry in request."


# ------------------------------------------------------------------ subnets
class SubnetNotFound(NotFound):
    message = "Subnet %(subnet_id)s could not be found."


class SubnetInUse(InUse):
    message = ("Unable to complete operation on subnet %(subnet_id)s: One or more ports "
               "have an IP allocation from this subnet.")


class GatewayIpInUse(InUse):
    message = ("Current gateway ip %(ip_address)s already in use by port %(port_id)s. Unable "
               "to update.")


class OverlappingAllocationPools(Conflict):
    message = ("Found overlapping allocation pools: %(pool_1)s %(pool_2)s for subnet "
               "%(subnet_cidr)s.")


class GatewayConflictWithAllocationPools(InUse):
    message = "Gateway ip %(ip_address)s conflicts with allocation pool %(pool)s."


class DNSNameServersExhausted(BadRequest):
    message = ("Unable to complete operation for %(subnet_id)s. The number of DNS "
               "nameservers exceeds the limit %(quota)s.")


class HostRoutesExhausted(BadRequest):
    message = ("Unable to complete operation for %(subnet_id)s. The number of host routes "
               "exceeds the limit %(quota)s.")


class InvalidAllocationPool(BadRequest):
    message = "The allocation pool %(pool)s is not valid."


class OutOfBoundsAllocationPool(BadRequest):
    message = "The allocation pool %(pool)s spans beyond the subnet cidr %(subnet_cidr)s."


# ------------------------------------------------------------------ subnet pools
class SubnetPoolNotFound(NotFound):
    message = "Subnet pool %(subnetpool_id)s could not be found."


class SubnetAllocationError(Conflict):
    message = "Failed to allocate subnet: %(reason)s."


class MinPrefixSubnetAllocationError(BadRequest):
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, minimum allowed "
               "prefix is %(min_prefixlen)s.")


class MaxPrefixSubnetAllocationError(BadRequest):
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, maximum allowed "
               "prefix is %(max_prefixlen)s.")


class SubnetPoolQuotaExceeded(Conflict):
    message = "Per-project subnet pool prefix quota exceeded."


class SubnetPoolDeleteError(BadRequest):
    message = "Unable to delete subnet pool: %(reason)s."


class IllegalSubnetPoolPrefixUpdate(BadRequest):
    message = "Illegal update to prefixes: %(msg)s."


class DefaultSubnetPoolExists(BadRequest):
    error_type = "BadRequest"
    message = ("A default subnetpool for this IP family has already been set. Only one default "
               "may exist per IP family")


# ------------------------------------------------------------------ ports
class PortNotFound(NotFound):
    message = "Port %(port_id)s could not be found."


class MacAddressInUse(InUse):
    message = "Unable to complete operation for network %(net_id)s. The mac address %(mac)s is in use."


class IpAddressInUse(InUse):
    message = ("Unable to complete operation for network %(net_id)s. The IP address "
               "%(ip_address)s is in use.")


class IpAddressAlreadyAllocated(Conflict):
    message = "IP address %(ip)s already allocated in subnet %(subnet_id)s"


class IpAddressGenerationFailure(Conflict):
    message = "No more IP addresses available on network %(net_id)s."


class IpAddressGenerationFailureNoMatchingSubnet(Conflict):
    message = ("No valid service subnet for the given device owner, network %(network_id)s, "
               "service type %(service_type)s.")


class InvalidIpForSubnet(BadRequest):
    message = "IP address %(ip_address)s is not a valid IP for the specified subnet."


class InvalidIpForNetwork(BadRequest):
    message = "IP address %(ip_address)s is not a valid IP for any of the subnets on the specified network."


class ServicePortInUse(InUse):
    message = "Port %(port_id)s cannot be deleted directly via the port API: %(reason)s."


class PortSecurityAndIPRequiredForSecurityGroups(InvalidInput):
    message = ("Port security must be enabled and port must have an IP address in order to use "
               "security groups.")


class PortSecurityPortHasSecurityGroup(InUse):
    message = ("Port has security group associated. Cannot disable port security or IP address "
               "until security group is removed.")


class AddressPairAndPortSecurityRequired(Conflict):
    message = "Port Security must be enabled in order to have allowed address pairs on a port."


class DuplicateAddressPairInRequest(InvalidInput):
    message = ("Request contains duplicate address pair: mac_address %(mac_address)s ip_address "
               "%(ip_address)s.")


# ------------------------------------------------------------------ security groups
class SecurityGroupNotFound(NotFound):
    message = "Security group %(id)s does not exist"


class SecurityGroupRuleNotFound(NotFound):
    message = "Security group rule %(id)s does not exist"


class SecurityGroupRuleExists(InUse):
    message = "Security group rule already exists. Rule id is %(rule_id)s."


class SecurityGroupInUse(InUse):
    message = "Security Group %(id)s %(reason)s."


class SecurityGroupCannotRemoveDefault(InUse):
    message = "Insufficient rights for removing default security group."


class SecurityGroupCannotUpdateDefault(InUse):
    message = "Updating default security group not allowed."


class SecurityGroupDefaultAlreadyExists(InUse):
    message = "Default security group already exists."


class SecurityGroupRuleInvalidProtocol(InvalidInput):
    message = ("Security group rule protocol %(protocol)s not supported. Only protocol values "
               "%(values)s and integer representations [0 to 255] are supported.")


class SecurityGroupRemoteGroupAndRemoteIpPrefix(InvalidInput):
    message = "Only remote_ip_prefix or remote_group_id may be provided."


class SecurityGroupProtocolRequiredWithPorts(InvalidInput):
    message = "Must also specify protocol if port range is given."


class SecurityGroupInvalidPortRange(InvalidInput):
    message = "For TCP/UDP protocols, port_range_min must be <= port_range_max"


class SecurityGroupInvalidPortValue(InvalidInput):
    message = "Invalid value for port %(port)s"


class SecurityGroupInvalidIcmpValue(InvalidInput):
    message = "Invalid value for ICMP %(field)s (%(attr)s) %(value)s. It must be 0 to 255."


class SecurityGroupMissingIcmpType(InvalidInput):
    message = "ICMP code (port-range-max) %(value)s is provided but ICMP type (port-range-min) is missing."


class SecurityGroupRuleParameterConflict(InvalidInput):
    message = "Conflicting value ethertype %(ethertype)s for CIDR %(cidr)s"


class SecurityGroupConflict(Conflict):
    message = "Error %(reason)s while attempting the operation."


class SecurityGroupRuleInvalidEtherType(InvalidInput):
    message = ("Security group rule for ethertype '%(ethertype)s' not supported. Allowed values "
               "are %(values)s.")


# ------------------------------------------------------------------ L3 (routers, floating IPs, quotas)
class BadResourceRequest(InvalidInput):
    """neutron-lib's `BadRequest(resource=..., msg=...)`: type `BadRequest`."""

    error_type = "BadRequest"
    message = "Bad %(resource)s request: %(msg)s."

    def __init__(self, msg: str, resource: str = "router") -> None:
        super().__init__(resource=resource, msg=msg)


def bad_router(msg: str) -> BadResourceRequest:
    return BadResourceRequest(msg, "router")


def bad_floatingip(msg: str) -> BadResourceRequest:
    return BadResourceRequest(msg, "floatingip")


class RouterNotFound(NotFound):
    message = "Router %(router_id)s could not be found"


class RouterInUse(InUse):
    message = "Router %(router_id)s %(reason)s"

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("reason", "still has ports")
        super().__init__(**kwargs)


class RouterInterfaceNotFound(NotFound):
    message = "Router %(router_id)s does not have an interface with id %(port_id)s"


class RouterInterfaceNotFoundForSubnet(NotFound):
    message = "Router %(router_id)s has no interface on subnet %(subnet_id)s"


class RouterInterfaceInUseByFloatingIP(InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s cannot be "
               "deleted, as it is required by one or more floating IPs.")


class RouterInterfaceInUseByRoute(InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s cannot be "
               "deleted, as it is required by one or more routes.")


class RouterExternalGatewayInUseByFloatingIp(InUse):
    message = ("Gateway cannot be updated for router %(router_id)s, since a gateway to "
               "external network %(net_id)s is required by one or more floating IPs.")


class InvalidRoutes(InvalidInput):
    message = "Invalid format for routes: %(routes)s, %(reason)s"


class RoutesExhausted(BadRequest):
    message = ("Unable to complete operation for %(router_id)s. The number of routes "
               "exceeds the maximum %(quota)s.")


class PortInUse(InUse):
    message = ("Unable to complete operation on port %(port_id)s for network %(net_id)s. "
               "Port already has an attached device %(device_id)s.")


class SubnetMismatchForPort(BadRequest):
    message = "Subnet on port %(port_id)s does not match the requested subnet %(subnet_id)s."


class FloatingIPNotFound(NotFound):
    message = "Floating IP %(floatingip_id)s could not be found"


class ExternalGatewayForFloatingIPNotFound(NotFound):
    message = ("External network %(external_network_id)s is not reachable from subnet "
               "%(subnet_id)s.  Therefore, cannot associate Port %(port_id)s with a "
               "Floating IP.")


class FloatingIPPortAlreadyAssociated(InUse):
    message = ("Cannot associate floating IP %(floating_ip_address)s (%(fip_id)s) with port "
               "%(port_id)s using fixed IP %(fixed_ip)s, as that fixed IP already has a "
               "floating IP on external network %(net_id)s.")


class ExternalIpAddressExhausted(BadRequest):
    message = "Unable to find any IP address on external network %(net_id)s."


class AutoAllocationFailure(Conflict):
    message = "Deployment error: %(reason)s."


class OverQuota(Conflict):
    message = "Quota exceeded for resources: %(overs)s."


class QuotaNotAuthorized(NotAuthorized):
    error_type = "NotAuthorized"
    message = "Only admin is authorized to access quotas for another project"


# ------------------------------------------------------------------ RBAC policies and address scopes
class RbacPolicyNotFound(NotFound):
    message = "RBAC policy of type %(object_type)s with ID %(id)s not found"


class DuplicateRbacPolicy(Conflict):
    message = "An RBAC policy already exists with those values."


class RbacPolicyInUse(Conflict):
    message = ("RBAC policy on object %(object_id)s cannot be removed because other objects "
               "depend on it.\nDetails: %(details)s")


class InvalidActionForType(InvalidInput):
    message = ("Invalid action '%(action)s' for object type '%(object_type)s'. Valid actions: "
               "%(valid_actions)s")


class AddressScopeNotFound(NotFound):
    message = "Address scope %(address_scope_id)s could not be found"


class AddressScopeInUse(InUse):
    message = ("Unable to complete operation on address scope %(address_scope_id)s. There are "
               "one or more subnet pools in use on the address scope")


class AddressScopeUpdateError(BadRequest):
    message = "Unable to update address scope %(address_scope_id)s : %(reason)s"


class AddressScopePrefixConflict(Conflict):
    message = ("Failed to associate address scope: subnetpools within an address scope must "
               "have unique prefixes.")


class IllegalSubnetPoolAssociationToAddressScope(BadRequest):
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s cannot be "
               "associated with address scope %(address_scope_id)s.")


class IllegalSubnetPoolIpVersionAssociationToAddressScope(BadRequest):
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s cannot associate "
               "with address scope %(address_scope_id)s because subnetpool ip_version is not "
               "%(ip_version)s.")


# ------------------------------------------------------------------ segments
class SegmentNotFound(NotFound):
    message = "Segment %(segment_id)s could not be found."


class SegmentInUse(InUse):
    message = "Segment '%(segment_id)s' cannot be deleted: %(reason)s."


class NetworkIdsDontMatch(BadRequest):
    message = ("The subnet's network id, '%(subnet_network)s', doesn't match the network_id "
               "of segment '%(segment_id)s'")


class SubnetsNotAllAssociatedWithSegments(BadRequest):
    message = ("All of the subnets on network '%(network_id)s' must either all be associated "
               "with segments or all not associated with any segment.")


class SubnetCantAssociateToDynamicSegment(BadRequest):
    message = "A subnet cannot be associated with a dynamic segment."


class SubnetSegmentAssociationChangeNotAllowed(BadRequest):
    message = ("A subnet that is already associated with a segment cannot have its segment "
               "association changed.")


class NoUpdateSubnetWhenMultipleSegmentsOnNetwork(BadRequest):
    message = ("The network '%(network_id)s' has multiple segments, it is only possible to "
               "associate an existing subnet with a segment on networks with a single "
               "segment.")


class FixedIpsSubnetsNotOnSameSegment(BadRequest):
    message = "Cannot allocate addresses from different segments."


class HostNotConnectedToAnySegment(Conflict):
    message = ("Host %(host)s is not connected to any segments on routed provider network "
               "'%(network_id)s'.  It should be connected to one.")


class HostNotCompatibleWithFixedIps(Conflict):
    message = ("Host %(host)s is not connected to a segment where the existing fixed_ips on "
               "port %(port_id)s will function given the routed network topology.")
