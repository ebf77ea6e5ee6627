"""stackling: an OpenStack-compatible cloud control plane in one Python process."""

__version__ = "0.1.0"
