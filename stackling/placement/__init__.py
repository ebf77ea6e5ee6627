"""The Placement service: resource providers, inventories, allocations, candidates."""
