"""Configuration: the keys, where their values come from, and the effective configuration an operator reads.

- `keys.py`: `Config`, one frozen typed value; each key's default, documentation and bounds, validated alone and
  across keys.
- `sources.py`: the YAML file, then `VERDICT_*` variables, then flags (the later winning), unknown keys rejected.
- `effective.py`: `verdict config` (secrets masked) and `verdict config --check FILE`.

Only the foundations (`verdict.errors`, `verdict.metrics`) sit below this package.
"""

from __future__ import annotations

from verdict.config.effective import MASK, is_secret, render
from verdict.config.keys import DEFAULT_JUDGE_MODEL, ENV_PREFIX, JUDGE_TIMEOUT_CEILING_SECONDS, Config, config_keys
from verdict.config.sources import is_service_link, load_config, parse_value

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "ENV_PREFIX",
    "JUDGE_TIMEOUT_CEILING_SECONDS",
    "MASK",
    "Config",
    "config_keys",
    "is_secret",
    "is_service_link",
    "load_config",
    "parse_value",
    "render",
]
