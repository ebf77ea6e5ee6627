"""What extensions add to ports, networks and floating IPs: extra DHCP options
(`extra_dhcp_opt`) and DNS (`dns-integration`, `dns-domain-ports`). Rules: README.md,
"Extra DHCP options and DNS"."""
