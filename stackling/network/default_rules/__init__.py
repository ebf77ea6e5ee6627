"""The default security group rules templates (`security-groups-default-rules`). Rules:
README.md, "Default security group rules"."""
