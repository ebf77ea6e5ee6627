"""Start-up mistakes an operator makes, as one line naming the setting: never a traceback."""

from __future__ import annotations

import os


class StartupError(Exception):
    """A start-up problem already phrased for the operator."""


def explain_startup_error(exc: BaseException) -> str | None:
    """One line for a known start-up mistake, or None (then the traceback is a bug)."""
    from stackling.config import SettingsError

    if isinstance(exc, SettingsError):
        return f"settings: {exc}"
    config = os.environ.get("STACKLING_CONFIG")
    try:
        import yaml
    except ImportError:  # pragma: no cover - a dependency
        yaml = None  # type: ignore[assignment]
    if yaml is not None and isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"config: {config}: not valid YAML: {problem}{where}"
    if isinstance(exc, OSError) and config and getattr(exc, "filename", None) == config:
        return f"config: cannot read {config}: {exc.strerror}"
    from sqlalchemy import exc as sa_exc

    if isinstance(exc, sa_exc.NoSuchModuleError | sa_exc.ArgumentError):
        return f"database_url: not a usable database URL: {str(exc).splitlines()[0]}"
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        reason = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
        return f"database_url: cannot connect to the database: {reason[0] if reason else exc}"
    return None
