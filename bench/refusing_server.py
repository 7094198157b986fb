"""`python -m bench.refusing_server [flags of verdict serve]`: `verdict serve` whose admission control has no running
slot and no queue, so every VerdictService call is refused as it is under overload (RESOURCE_EXHAUSTED with a retry
hint, counted, logged), by the production path. Under twice the capacity about half the calls take that path, so the
price of a refusal, next to the bare echo's price of any call, bounds the goodput (bench_load.unary)."""

from __future__ import annotations

import sys

from verdict.config.keys import Config
from verdict.server.interceptors import admission


def _no_slots(cls: type[admission.AdmissionLimits], config: Config) -> admission.AdmissionLimits:
    return cls(0, 0, config.min_deadline_seconds)


def main(argv: list[str]) -> int:
    admission.AdmissionLimits.from_config = classmethod(_no_slots)  # type: ignore[method-assign, assignment]
    from verdict.cli.main import main as cli

    return cli(["serve", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
