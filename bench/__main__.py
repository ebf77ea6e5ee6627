"""Run every benchmark module in bench/ (each prints a markdown table)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

SKIP = {"common", "__main__"}


def main() -> None:
    names = sys.argv[1:] or sorted(
        m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name not in SKIP)
    for name in names:
        print(f"\n# bench.{name}\n", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
