"""The Networking service (Neutron v2.0 compatible), served under /networking."""
