"""Run every bench module (`bench_*.py`) in this package and print what each measured."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    """`python -m bench [name ...]`: run all bench modules, or only those whose name contains one of the arguments."""
    package = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(package)]) if m.name.startswith("bench_"))
    if argv:
        names = [name for name in names if any(arg in name for arg in argv)]
    started = time.perf_counter()
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name}", flush=True)
        for line in module.run():
            print(f"   {line}", flush=True)
    print(f"== {len(names)} bench module(s) in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
