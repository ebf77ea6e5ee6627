"""Cinder's exceptions (names and messages as cinder/exception.py), rendered as faults.

Cinder's fault body is Nova's (`{"itemNotFound": {"code": 404, "message": ...}}`, the
same key per status from cinder.api.openstack.wsgi.Fault), so the service uses the
compute family's renderer."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import ApiError, BadRequest, Conflict, Forbidden, NotFound

FAMILY = "compute"  # common.errors.render_compute: the same fault names


class Invalid(BadRequest):
    message = "Unacceptable parameters."


class InvalidInput(Invalid):
    message = "Invalid input received: %(reason)s"


class InvalidVolume(Invalid):
    message = "Invalid volume: %(reason)s"


class InvalidSnapshot(Invalid):
    message = "Invalid snapshot: %(reason)s"


class InvalidBackup(Invalid):
    message = "Invalid backup: %(reason)s"


class InvalidVolumeType(Invalid):
    message = "Invalid volume type: %(reason)s"


class InvalidAuthKey(Invalid):
    message = "Invalid auth key: %(reason)s"


class InvalidVolumeMetadata(Invalid):
    message = "Invalid metadata: %(reason)s"


class VolumeNotFound(NotFound):
    message = "Volume %(volume_id)s could not be found."


class VolumeAttachmentNotFound(NotFound):
    message = "Volume attachment could not be found with filter: %(filter)s."


class SnapshotNotFound(NotFound):
    message = "Snapshot %(snapshot_id)s could not be found."


class BackupNotFound(NotFound):
    message = "Backup %(backup_id)s could not be found."


class TransferNotFound(NotFound):
    message = "Transfer %(transfer_id)s could not be found."


class VolumeTypeNotFound(NotFound):
    message = "Volume type %(volume_type_id)s could not be found."


class VolumeTypeNotFoundByName(VolumeTypeNotFound):
    message = "Volume type with name %(volume_type_name)s could not be found."


class VolumeTypeAccessNotFound(NotFound):
    message = "Volume type access not found for %(volume_type_id)s / %(project_id)s combination."


class VolumeTypeProjectDefaultNotFound(NotFound):
    message = "Default type for project %(project_id)s not found."


class QoSSpecsNotFound(NotFound):
    message = "No such QoS spec %(specs_id)s."


class ImageNotFound(NotFound):
    message = "Image %(image_id)s could not be found."


class VolumeMetadataNotFound(NotFound):
    message = "Volume %(volume_id)s has no metadata with key %(metadata_key)s."


class SnapshotMetadataNotFound(NotFound):
    message = "Snapshot %(snapshot_id)s has no metadata with key %(metadata_key)s."


class VolumeTypeExtraSpecsNotFound(NotFound):
    message = "Volume Type %(volume_type_id)s has no extra specs with key %(extra_specs_key)s."


class VolumeTypeExists(Conflict):
    message = "Volume Type %(id)s already exists."


class VolumeTypeAccessExists(Conflict):
    message = "Volume type access for %(volume_type_id)s / %(project_id)s combination already exists."


class QoSSpecsExists(Conflict):
    message = "QoS Specs %(specs_id)s already exists."


class VolumeTypeInUse(BadRequest):
    message = ("Volume Type %(volume_type_id)s deletion is not allowed with volumes present "
               "with the type.")


class VolumeTypeDefaultDeletionError(BadRequest):
    message = "The volume type %(volume_type_id)s is a default volume type and cannot be deleted."


class QoSSpecsInUse(BadRequest):
    message = "QoS Specs %(specs_id)s is still associated with entities."


class QuotaError(ApiError):
    """Cinder's QuotaError family: 413 (overLimit) with `Retry-After: 0`."""

    status = 413
    message = "Quota exceeded: code=%(code)s"

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("headers", {"Retry-After": "0"})
        super().__init__(message, **kwargs)


class VolumeSizeExceedsAvailableQuota(QuotaError):
    message = ("Requested volume or snapshot exceeds allowed %(name)s quota. Requested "
               "%(requested)sG, quota is %(quota)sG and %(consumed)sG has been consumed.")


class VolumeSizeExceedsLimit(QuotaError):
    message = "Requested volume size %(size)sG is larger than maximum allowed limit %(limit)sG."


class VolumeBackupSizeExceedsAvailableQuota(QuotaError):
    message = ("Requested backup exceeds allowed Backup gigabytes quota. Requested "
               "%(requested)sG, quota is %(quota)sG and %(consumed)sG has been consumed.")


class VolumeLimitExceeded(QuotaError):
    message = "Maximum number of volumes allowed (%(allowed)s) exceeded for quota '%(name)s'."


class SnapshotLimitExceeded(QuotaError):
    message = "Maximum number of snapshots allowed (%(allowed)s) exceeded"


class BackupLimitExceeded(QuotaError):
    message = "Maximum number of backups allowed (%(allowed)s) exceeded"


class NotAuthorized(Forbidden):
    message = "Not authorized."
