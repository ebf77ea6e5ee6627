"""The dataplane's admin API as a component (no catalog entry: not an OpenStack service).
The kernel is read only inside its handlers, so loading it costs nothing."""

from __future__ import annotations

from stackling.dataplane import api
from stackling.runtime import Component

COMPONENT = Component(name="dataplane", build=api.build, policies=api.POLICIES)
