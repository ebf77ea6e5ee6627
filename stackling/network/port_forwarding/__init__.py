"""Floating IP port forwardings (`floating-ip-port-forwarding`)."""
