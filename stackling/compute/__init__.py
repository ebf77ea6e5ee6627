"""Compute (Nova v2.1 with microversions): servers, flavors, keypairs, hosts, aggregates."""
