"""The web console: static pages over the services' own APIs, and /metrics."""
