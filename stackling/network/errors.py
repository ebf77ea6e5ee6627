"""Neutron's exceptions, by their upstream names (the `type` in NeutronError bodies).

Statuses follow neutron-lib's families: BadRequest/InvalidInput 400, NotAuthorized 403,
NotFound 404, Conflict/InUse 409, PreconditionFailed 412, ServiceUnavailable 503.
"""

from __future__ import annotations

from stackling.common import errors


class BadRequest(errors.BadRequest):
    error_type = "HTTPBadRequest"
    message = "Bad request."


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


class OverlappingAllocationPools(Conflict):
    message = ("Found overlapping allocation pools: %(pool_1)s %(pool_2)s for subnet "
               "%(subnet_cidr)s.")


class GatewayConflictWithAllocationPools(InUse):
    message = "Gateway ip %(ip_address)s conflicts with allocation pool %(pool)s."


class DNSNameServersExhausted(BadRequest):
    error_type = "DNSNameServersExhausted"
    message = ("Unable to complete operation for %(subnet_id)s. The number of DNS "
               "nameservers exceeds the limit %(quota)s.")


class HostRoutesExhausted(BadRequest):
    error_type = "HostRoutesExhausted"
    message = ("Unable to complete operation for %(subnet_id)s. The number of host routes "
               "exceeds the limit %(quota)s.")


class InvalidAllocationPool(BadRequest):
    error_type = "InvalidAllocationPool"
    message = "The allocation pool %(pool)s is not valid."


class OutOfBoundsAllocationPool(BadRequest):
    error_type = "OutOfBoundsAllocationPool"
    message = "The allocation pool %(pool)s spans beyond the subnet cidr %(subnet_cidr)s."


class SubnetsNotAllAssociatedWithSegments(BadRequest):
    error_type = "SubnetsNotAllAssociatedWithSegments"
    message = ("Subnets hosted on the same network must be allocated from the same segment "
               "or all subnets must be unassociated (network %(network_id)s)")


# ------------------------------------------------------------------ subnet pools
class SubnetPoolNotFound(NotFound):
    message = "Subnet pool %(subnetpool_id)s could not be found."


class SubnetAllocationError(Conflict):
    message = "Failed to allocate subnet: %(reason)s."


class MinPrefixSubnetAllocationError(BadRequest):
    error_type = "MinPrefixSubnetAllocationError"
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, minimum allowed "
               "prefix is %(min_prefixlen)s.")


class MaxPrefixSubnetAllocationError(BadRequest):
    error_type = "MaxPrefixSubnetAllocationError"
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, maximum allowed "
               "prefix is %(max_prefixlen)s.")


class SubnetPoolQuotaExceeded(Conflict):
    message = "Per-project subnet pool prefix quota exceeded."


class SubnetPoolDeleteError(BadRequest):
    error_type = "SubnetPoolDeleteError"
    message = "Unable to delete subnet pool: %(reason)s."


class IllegalSubnetPoolPrefixUpdate(BadRequest):
    error_type = "IllegalSubnetPoolPrefixUpdate"
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
    error_type = "InvalidIpForSubnet"
    message = "IP address %(ip_address)s is not a valid IP for the specified subnet."


class InvalidIpForNetwork(BadRequest):
    error_type = "InvalidIpForNetwork"
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
