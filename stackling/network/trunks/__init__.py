"""Trunks (`trunk`, `trunk-details`): a parent port carrying sub-ports of other networks,
each tagged with a VLAN id. Rules: README.md, "Trunks"."""
