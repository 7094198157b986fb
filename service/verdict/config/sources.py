"""Where the configuration comes from: the YAML file, then `VERDICT_*` variables, then flags, the later winning.

Every key `some_key` can be set three ways: the YAML file given to `--config`, the environment variable
`VERDICT_SOME_KEY`, and the flag `--some-key` of `verdict serve`. Unknown keys in the file or in `VERDICT_*`
variables are rejected with an error that names them, because a typo that is silently ignored is a setting that
silently does nothing. The one exception is the set of variables Kubernetes injects for a Service named `verdict`
(`VERDICT_PORT=tcp://...`, `VERDICT_SERVICE_HOST`, ...): they are skipped with a debug line, see `is_service_link`.
Kept apart from `config.py`, which holds the keys and their validation: this module only reads and coerces.

The environment is passed in as a mapping, so tests never patch `os.environ`.
"""

from __future__ import annotations

import difflib
import logging
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from verdict.config.keys import ENV_PREFIX, Config, config_keys
from verdict.errors import ConfigError

__all__ = ["is_service_link", "load_config", "parse_value"]

_log = logging.getLogger("verdict.config")


def _field_types() -> dict[str, Any]:
    hints = typing.get_type_hints(Config)
    return {name: hints[name] for name in config_keys()}


def parse_value(key: str, raw: object) -> object:
    """Coerce one raw value (a YAML scalar, or a string from the environment or a flag) to the key's type."""
    kind = _field_types()[key]
    origin = typing.get_origin(kind)
    if key == "log_level" and isinstance(raw, str):
        raw = raw.strip().upper()  # `--log-level debug` means DEBUG, as logging itself reads it
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ConfigError(key, f"must be a boolean, got {raw!r}")
    if kind is int:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise ConfigError(key, f"must be an integer, got {raw!r}")
        try:
            return int(str(raw).strip()) if not isinstance(raw, float) else int(raw)
        except ValueError:
            raise ConfigError(key, f"must be an integer, got {raw!r}") from None
    if kind is float:
        if isinstance(raw, bool):
            raise ConfigError(key, f"must be a number, got {raw!r}")
        try:
            return float(str(raw).strip()) if not isinstance(raw, int | float) else float(raw)
        except ValueError:
            raise ConfigError(key, f"must be a number, got {raw!r}") from None
    if origin is tuple:
        if isinstance(raw, str):
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
            return tuple(raw)
        raise ConfigError(key, f"must be a list of strings, got {raw!r}")
    if kind is str or (origin in (types.UnionType, typing.Union)):
        if raw is None:
            return ""
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            raise ConfigError(key, f"must be a string, got {raw!r}")
        return str(raw)
    raise ConfigError(key, f"unsupported type {kind!r}")  # pragma: no cover - a new field type needs a branch here


_IPV4 = r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}"
_IPV6 = r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"
_IP = rf"{_IPV4}|{_IPV6}"
_PORT = r"[0-9]{1,5}"
_URL = rf"(?:tcp|udp|sctp)://(?:{_IPV4}|\[{_IPV6}\]):{_PORT}"
_SERVICE_LINKS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(name), re.compile(value))
    for name, value in (
        (r"SERVICE_HOST", _IP),
        (r"SERVICE_PORT", _PORT),
        (r"SERVICE_PORT_[A-Z0-9_]+", _PORT),
        (r"PORT", _URL),
        (rf"PORT_{_PORT}_(?:TCP|UDP|SCTP)", _URL),
        (rf"PORT_{_PORT}_(?:TCP|UDP|SCTP)_PROTO", r"tcp|udp|sctp"),
        (rf"PORT_{_PORT}_(?:TCP|UDP|SCTP)_PORT", _PORT),
        (rf"PORT_{_PORT}_(?:TCP|UDP|SCTP)_ADDR", _IP),
    )
)
"""The variables kubelet injects into every pod of a namespace for a Service named `verdict` (service links, on
unless a pod sets `enableServiceLinks: false`): name pattern after `VERDICT_`, and the shape of the value kubelet
writes. They are not configuration, and a pod that merely shares a namespace with such a Service must still start.
Matching the value too keeps a hand-written `VERDICT_PORT=50051` (someone guessing a key name) an error."""


def is_service_link(name: str, value: str) -> bool:
    """Whether `name=value` is a variable Kubernetes injects for a Service named `verdict`, not a setting."""
    if not name.startswith(ENV_PREFIX):
        return False
    suffix = name[len(ENV_PREFIX) :]
    return any(n.fullmatch(suffix) and v.fullmatch(value) for n, v in _SERVICE_LINKS)


def _unknown(key: str, source: str) -> ConfigError:
    close = difflib.get_close_matches(key, config_keys(), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(key, f"unknown key in {source}{hint}")


def load_config(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, object] | None = None,
) -> Config:
    """Build the configuration from a YAML file, then `VERDICT_*` environment variables, then flags (later wins).

    Raises ConfigError naming the key for an unknown key, a value of the wrong type, or a value out of range.
    """
    values: dict[str, object] = {}
    if path:
        try:
            document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError("config", f"cannot read {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError("config", f"{path} is not valid YAML: {exc}") from None
        if document is None:
            document = {}
        if not isinstance(document, dict):
            raise ConfigError("config", f"{path} must hold a mapping of keys to values")
        for key, raw in document.items():
            if key not in config_keys():
                raise _unknown(str(key), str(path))
            values[key] = parse_value(key, raw)
    for name, raw in (env or {}).items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in config_keys():
            if is_service_link(name, raw):
                _log.debug("ignoring %s: a Kubernetes service-link variable, not a setting", name)
                continue
            raise _unknown(key, f"environment variable {name}")
        values[key] = parse_value(key, raw)
    for key, raw in (flags or {}).items():
        if raw is None:
            continue
        if key not in config_keys():
            raise _unknown(key, "flags")
        values[key] = parse_value(key, raw)
    return Config(**values)  # type: ignore[arg-type]
