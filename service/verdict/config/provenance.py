"""Where each configuration value came from, and every error in a configuration at once.

`load_config` (sources.py) stops at the first bad key, which is right for a server starting up. An operator fixing a
file before a rollout wants the whole list in one go (`verdict config --check FILE`), and one reading a running
configuration wants to know which layer set each value (`verdict config --explain`): the default, the file, a
`VERDICT_*` variable, or a flag. Both read the same three layers in the same order as `load_config`, with the same
coercion (`parse_value`) and the same checks (`Config`), so they cannot disagree with what the server would do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from verdict.config.keys import ENV_PREFIX, Config, config_keys
from verdict.config.sources import _unknown, is_service_link, parse_value
from verdict.errors import ConfigError

__all__ = ["Provenance", "check_all", "explained", "provenance"]

DEFAULT_SOURCE = "default"


@dataclasses.dataclass(frozen=True)
class Provenance:
    """The effective configuration, each key's source, and every error found on the way (empty when valid)."""

    config: Config | None
    sources: Mapping[str, str]
    errors: tuple[ConfigError, ...]


def _layers(
    path: str | Path | None, env: Mapping[str, str] | None, flags: Mapping[str, object] | None
) -> tuple[list[tuple[str, object, str]], list[ConfigError]]:
    """(key, raw value, source) in the order load_config applies them, and the errors of reading them."""
    entries: list[tuple[str, object, str]] = []
    errors: list[ConfigError] = []
    if path:
        try:
            document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            return [], [ConfigError("config", f"cannot read {path}: {exc.strerror}")]
        except yaml.YAMLError as exc:
            return [], [ConfigError("config", f"{path} is not valid YAML: {exc}")]
        if document is not None and not isinstance(document, dict):
            return [], [ConfigError("config", f"{path} must hold a mapping of keys to values")]
        for key, raw in (document or {}).items():
            if key not in config_keys():
                errors.append(_unknown(str(key), str(path)))
            else:
                entries.append((key, raw, f"file {path}"))
    for name, raw in (env or {}).items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key in config_keys():
            entries.append((key, raw, f"environment {name}"))
        elif not is_service_link(name, raw):
            errors.append(_unknown(key, f"environment variable {name}"))
    for key, raw in (flags or {}).items():
        if raw is None:
            continue
        if key in config_keys():
            entries.append((key, raw, f"flag --{key.replace('_', '-')}"))
        else:
            errors.append(_unknown(key, "flags"))
    return entries, errors


def provenance(
    path: str | Path | None = None, env: Mapping[str, str] | None = None, flags: Mapping[str, object] | None = None
) -> Provenance:
    """Read the three layers as load_config does, but go on past errors: every unknown key, every value of the wrong
    type, every value Config refuses (each refused key is left out and Config built again, so one bad key does not
    hide the next)."""
    entries, errors = _layers(path, env, flags)
    values: dict[str, object] = {}
    sources = dict.fromkeys(config_keys(), DEFAULT_SOURCE)
    for key, raw, source in entries:
        try:
            values[key] = parse_value(key, raw)
        except ConfigError as error:
            errors.append(ConfigError(error.key, f"{_message(error)} ({source})"))
            continue
        sources[key] = source
    for _ in range(len(config_keys()) + 1):
        try:
            config = Config(**values)  # type: ignore[arg-type]
        except ConfigError as error:
            origin = sources.get(error.key, DEFAULT_SOURCE)
            errors.append(ConfigError(error.key, f"{_message(error)} ({origin})"))
            if error.key not in values:  # a cross-key check about a default: nothing left to drop
                return Provenance(None, sources, tuple(errors))
            del values[error.key]
            sources[error.key] = DEFAULT_SOURCE
            continue
        return Provenance(None if errors else config, sources, tuple(errors))
    return Provenance(None, sources, tuple(errors))


def _message(error: ConfigError) -> str:
    return str(error).removeprefix(f"{error.key}: ")


def check_all(path: str | Path) -> tuple[ConfigError, ...]:
    """Every error in the configuration file at `path` alone (the environment is not read)."""
    return provenance(path).errors


def explained(found: Provenance) -> list[dict[str, Any]]:
    """One entry per key: its effective value (secrets masked) and where it came from."""
    from verdict.config.effective import MASK, is_secret

    assert found.config is not None
    rows = []
    for field in dataclasses.fields(found.config):
        value = getattr(found.config, field.name)
        shown = MASK if is_secret(field.name) and value else (list(value) if isinstance(value, tuple) else value)
        rows.append({"key": field.name, "value": shown, "source": found.sources[field.name]})
    return rows
