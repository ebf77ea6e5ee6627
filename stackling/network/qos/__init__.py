"""Quality of service: policies, their rules, and the placement requests they make."""
