"""The orchestration service's in-process interface: empty. Heat is the top of the stack:
it calls compute, network and image through their doors and no service calls it in
process (clients reach it over HTTP). Anything another package needs of orchestration is
added here, and only here, so the import-linter contracts keep the rest of the package
private.
"""

from __future__ import annotations

__all__: list[str] = []
