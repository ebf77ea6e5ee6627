"""Microversion parsing and negotiation for compute and placement."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from stackling.common.errors import BadRequest, NotAcceptable

_VERSION_RE = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")


def get_version(headers: dict[str, str], service_type: str,
                legacy_headers: list[str] | None = None) -> str | None:
    """The version a request asks of `service_type`, or None.

    `OpenStack-API-Version` holds comma-separated `<service> <version>` entries (several
    headers arrive joined by commas); the legacy headers (e.g. Nova's) hold a bare version.
    Same rules as microversion-parse's `get_version`, which costs ~27 ms to import (it
    pulls in WebOb) — 5% of the start-up budget.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("openstack-api-version")
    if value:
        for entry in value.split(","):
            parts = entry.strip().split(None, 1)
            if len(parts) == 2 and parts[0].lower() == service_type.lower():
                return parts[1].strip()
    for name in legacy_headers or ():
        legacy = lowered.get(name.lower())
        if legacy:
            return legacy.split(",")[-1].strip()
    return None


class Version(NamedTuple):
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Version:
        m = _VERSION_RE.match(text.strip())
        if not m:
            raise ValueError(text)
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def matches(self, min_version: str | Version, max_version: str | Version | None = None) -> bool:
        lo = Version.parse(min_version) if isinstance(min_version, str) else min_version
        if self < lo:
            return False
        if max_version is None:
            return True
        hi = Version.parse(max_version) if isinstance(max_version, str) else max_version
        return self <= hi


@dataclass(frozen=True)
class VersionSpec:
    service_type: str  # "compute" or "placement"
    min_version: Version
    max_version: Version
    legacy_header: str | None = None  # e.g. "x-openstack-nova-api-version"

    def negotiate(self, headers: dict[str, str]) -> Version:
        """The version a request asks for; its default is the minimum.

        Raises BadRequest for a malformed version and NotAcceptable (with min/max
        attached for placement's error body) when it is out of range.
        """
        legacy = [self.legacy_header] if self.legacy_header else None
        requested = get_version(headers, self.service_type, legacy_headers=legacy)
        if requested is None:
            return self.min_version
        requested = requested.strip()
        if requested.lower() == "latest":
            return self.max_version
        try:
            version = Version.parse(requested)
        except ValueError:
            if self.service_type == "placement":
                # microversion-parse's middleware: int() of each part, so "1.05" is 1.5.
                try:
                    major, minor = (int(p) for p in requested.split(".", 1))
                except ValueError:
                    raise BadRequest(f"Invalid microversion: invalid version string: "
                                     f"{requested}") from None
                return self._check_range(Version(major, minor), requested)
            raise BadRequest(
                f"API Version String {requested} is of invalid format. "
                "Must be of format MajorNum.MinorNum."
            ) from None
        return self._check_range(version, requested)

    def _check_range(self, version: Version, requested: str) -> Version:
        if not (self.min_version <= version <= self.max_version):
            if self.service_type == "placement":
                err = NotAcceptable(
                    f"Invalid microversion: Unacceptable version header: {requested}"
                )
            else:
                err = NotAcceptable(
                    f"Version {requested} is not supported by the API. Minimum is "
                    f"{self.min_version} and maximum is {self.max_version}."
                )
            err.extra = {"max_version": str(self.max_version), "min_version": str(self.min_version)}
            raise err
        return version

    def response_headers(self, version: Version) -> dict[str, str]:
        headers = {"OpenStack-API-Version": f"{self.service_type} {version}"}
        vary = ["OpenStack-API-Version"]
        if self.legacy_header:
            headers["X-OpenStack-Nova-API-Version"] = str(version)
            vary.append("X-OpenStack-Nova-API-Version")
        headers["Vary"] = ", ".join(vary)
        return headers
