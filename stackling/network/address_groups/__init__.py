"""Address groups (`address-group`, `rbac-address-group`) and security group rules that
name one (`security-groups-remote-address-group`). Rules: README.md, "Address groups"."""
