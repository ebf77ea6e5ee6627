"""Metrics, request logs and the request id that ties a client call to its log lines."""
