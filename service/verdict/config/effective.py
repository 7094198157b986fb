"""The effective configuration as an operator reads it: `verdict config` prints it, `verdict config --check FILE`
validates a file before a rollout.

Printing is YAML in declaration order, each key once, so the output can itself be saved and loaded as a config file.
Secrets are masked: a key naming a key, token, password, secret or credential holds the secret itself and its
value is printed as `<masked>`; a key naming a file, path, directory or environment variable holds where the secret
lives, which an operator needs to see, and is printed as is.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import yaml

from verdict.config.keys import Config

__all__ = ["MASK", "is_secret", "render"]

MASK = "<masked>"
_SECRET_WORDS = re.compile(r"(^|_)(key|token|password|secret|credentials?)(_|$)")
_LOCATION_SUFFIXES = ("_file", "_path", "_dir", "_directory", "_env")


def is_secret(key: str) -> bool:
    """Whether a key's value is secret material (masked) rather than where to find it (shown)."""
    return bool(_SECRET_WORDS.search(key)) and not key.endswith(_LOCATION_SUFFIXES)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def render(config: Config) -> str:
    """The configuration as YAML, secrets masked; keys in declaration order."""
    values = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        values[field.name] = MASK if is_secret(field.name) and value else _plain(value)
    return yaml.safe_dump(values, sort_keys=False, default_flow_style=False, allow_unicode=True)
