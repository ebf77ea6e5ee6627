"""Benchmarks: each module runs by itself (`python -m bench.NAME`); `python -m bench` runs all."""
