"""Router conntrack helpers (`l3-conntrack-helper`)."""
