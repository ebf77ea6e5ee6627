"""Metering labels and rules (`metering`)."""
