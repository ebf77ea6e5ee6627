"""Exceptions of the segments service plugin, by their upstream names and messages."""

from __future__ import annotations

from stackling.network import errors


class SegmentNotFound(errors.NotFound):
    message = "Segment %(segment_id)s could not be found."


class SegmentInUse(errors.InUse):
    message = "Segment '%(segment_id)s' cannot be deleted: %(reason)s."


class NetworkIdsDontMatch(errors.BadRequest):
    error_type = "NetworkIdsDontMatch"
    message = ("The subnet's network id, '%(subnet_network)s', doesn't match the network_id "
               "of segment '%(segment_id)s'")


class SubnetsNotAllAssociatedWithSegments(errors.BadRequest):
    error_type = "SubnetsNotAllAssociatedWithSegments"
    message = ("All of the subnets on network '%(network_id)s' must either all be associated "
               "with segments or all not associated with any segment.")


class SubnetCantAssociateToDynamicSegment(errors.BadRequest):
    error_type = "SubnetCantAssociateToDynamicSegment"
    message = "A subnet cannot be associated with a dynamic segment."


class SubnetSegmentAssociationChangeNotAllowed(errors.BadRequest):
    error_type = "SubnetSegmentAssociationChangeNotAllowed"
    message = ("A subnet that is already associated with a segment cannot have its segment "
               "association changed.")


class NoUpdateSubnetWhenMultipleSegmentsOnNetwork(errors.BadRequest):
    error_type = "NoUpdateSubnetWhenMultipleSegmentsOnNetwork"
    message = ("The network '%(network_id)s' has multiple segments, it is only possible to "
               "associate an existing subnet with a segment on networks with a single "
               "segment.")


class FixedIpsSubnetsNotOnSameSegment(errors.BadRequest):
    error_type = "FixedIpsSubnetsNotOnSameSegment"
    message = "Cannot allocate addresses from different segments."


class HostNotConnectedToAnySegment(errors.Conflict):
    message = ("Host %(host)s is not connected to any segments on routed provider network "
               "'%(network_id)s'.  It should be connected to one.")


class HostNotCompatibleWithFixedIps(errors.Conflict):
    message = ("Host %(host)s is not connected to a segment where the existing fixed_ips on "
               "port %(port_id)s will function given the routed network topology.")
