"""Local IPs (`local_ip`): node-local virtual IPs and their port associations."""
