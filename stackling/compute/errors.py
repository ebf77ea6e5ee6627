"""Nova's exceptions (names and messages as upstream), rendered as compute faults."""

from __future__ import annotations

from stackling.common.errors import ApiError, BadRequest, Conflict, Forbidden, NotFound


class ValidationError(BadRequest):
    message = "%(detail)s"


class InstanceNotFound(NotFound):
    message = "Instance %(instance_id)s could not be found."


class FlavorNotFound(NotFound):
    message = "Flavor %(flavor_id)s could not be found."


class FlavorExists(Conflict):
    message = "Flavor with name %(name)s already exists."


class FlavorIdExists(Conflict):
    message = "Flavor with ID %(flavor_id)s already exists."


class KeypairNotFound(NotFound):
    message = "Keypair %(name)s not found for user %(user_id)s"


class KeyPairExists(Conflict):
    message = "Key pair '%(key_name)s' already exists."


class InvalidKeypair(BadRequest):
    message = "Keypair data is invalid: %(reason)s"


class ImageNotFound(BadRequest):
    message = "Image %(image_id)s could not be found."


class ImageNotActive(BadRequest):
    message = "Image %(image_id)s is not active."


class FlavorMemoryTooSmall(BadRequest):
    message = "Flavor's memory is too small for requested image."


class FlavorDiskTooSmall(BadRequest):
    message = "The created instance's disk would be too small."


class FlavorDiskSmallerThanImage(FlavorDiskTooSmall):
    message = ("Flavor's disk is too small for requested image. Flavor disk is "
               "%(flavor_size)i bytes, image is %(image_size)i bytes.")


class FlavorDiskSmallerThanMinDisk(FlavorDiskTooSmall):
    message = ("Flavor's disk is smaller than the minimum size specified in image metadata. "
               "Flavor disk is %(flavor_size)i bytes, minimum size is %(image_min_disk)i bytes.")


class BootFromVolumeRequiredForZeroDiskFlavor(Forbidden):
    message = "Only volume-backed servers are allowed for flavors with zero disk."


class CannotResizeDisk(BadRequest):
    message = "Server disk was unable to be resized because: %(reason)s"


class NetworkNotFound(BadRequest):
    message = "Network %(network_id)s could not be found."


class NetworkRequiresSubnet(BadRequest):
    message = "Network %(network_uuid)s requires a subnet in order to boot instances on."


class NetworkAmbiguous(Conflict):
    message = "Multiple possible networks found, use a Network ID to be more specific."


class UnableToAutoAllocateNetwork(BadRequest):
    message = "Unable to automatically allocate a network for project %(project_id)s"


class PortNotFound(BadRequest):
    message = "Port id %(port_id)s could not be found."


class PortInUse(Conflict):
    message = "Port %(port_id)s is still in use."


class PortRequiresFixedIP(BadRequest):
    message = "Port %(port_id)s requires a FixedIP in order to be used."


class CreateWithPortResourceRequestOldVersion(BadRequest):
    message = ("Creating servers with ports having resource requests, like a port with a QoS "
               "minimum bandwidth policy, is not supported until microversion 2.72.")


class PortNotUsable(BadRequest):
    message = "Port %(port_id)s not usable for instance %(instance)s."


class PortNotUsableDNS(BadRequest):
    message = ("Port %(port_id)s not usable for instance %(instance)s. Value %(value)s "
               "assigned to dns_name attribute does not match instance's hostname "
               "%(hostname)s")


class FixedIpAlreadyInUse(BadRequest):
    message = ("Fixed IP address %(address)s is already in use on instance "
               "%(instance_uuid)s.")


class NoValidHost(ApiError):
    status = 500
    message = "No valid host was found. %(reason)s"


class ServiceNotFound(NotFound):
    message = "Service %(service_id)s could not be found."


class ComputeHostNotFound(NotFound):
    message = "Compute host %(host)s could not be found."


class HypervisorNotFound(NotFound):
    message = "Hypervisor with ID '%(id)s' could not be found."


class AggregateNotFound(NotFound):
    message = "Aggregate %(aggregate_id)s could not be found."


class AggregateNameExists(Conflict):
    message = "Aggregate %(aggregate_name)s already exists."


class AggregateHostExists(Conflict):
    message = "Aggregate %(aggregate_id)s already has host %(host)s."


class AggregateHostNotFound(NotFound):
    message = "Aggregate %(aggregate_id)s has no host %(host)s."


class InstanceInvalidState(Conflict):
    message = ("Cannot '%(method)s' instance %(instance_uuid)s while it is in "
               "%(attr)s %(state)s")


class UnshelveInstanceInvalidState(Conflict):
    message = ("Specifying an availability zone or a host when unshelving server "
               "%(instance_uuid)s with status %(state)s is not supported. The server status "
               "must be SHELVED_OFFLOADED.")


class UnshelveHostNotInAZ(Conflict):
    message = 'Host "%(host)s" is not in the availability zone "%(availability_zone)s".'


class InstanceIsLocked(Conflict):
    message = "Instance %(instance_uuid)s is locked"


class QuotaExceeded(Forbidden):
    message = ("Quota exceeded for %(overs)s: Requested %(req)s, but already used %(used)s of "
               "%(allowed)s %(overs)s")


class NoUniqueMatch(Conflict):
    message = "%(detail)s"


class PortNotFoundAttach(NotFound):
    message = "Port %(port_id)s could not be found."


class NetworkNotFoundAttach(NotFound):
    message = "Network %(network_id)s could not be found."


class InterfaceAttachFailedNoNetwork(BadRequest):
    message = ("No specific network was requested and none are available for project "
               "'%(project_id)s'.")


class NetworkAmbiguousAttach(BadRequest):
    message = "Multiple possible networks found, use a Network ID to be more specific."


class NoMoreFixedIps(BadRequest):
    message = "No fixed IP addresses available for network: %(net)s"


class PortNotFoundForInstance(NotFound):
    message = "Port %(port_id)s is not attached to instance %(instance)s"


class SegmentNotReachable(BadRequest):
    """Beyond upstream (which fails only at port binding): refused before anything moves."""

    message = ("%(what)s has its IP addresses on segment %(segment)s of network "
               "%(network)s, which host %(host)s cannot reach.")
