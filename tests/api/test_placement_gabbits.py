"""Placement's HTTP contract as YAML steps (tests/api/placement/*.yaml), gabbi style."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.gabbi import run_file

FILES = sorted((Path(__file__).parent / "placement").glob("*.yaml"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_gabbit(api, path):
    run_file(api, path)
