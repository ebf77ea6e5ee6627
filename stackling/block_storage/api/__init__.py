"""Cinder v3 routes: one module per resource, each adding its paths to the service."""
