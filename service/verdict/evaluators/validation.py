"""Field-level validation: a configuration dict checked against one evaluator type's field specs.

Every key must belong to the evaluator's type (an unknown key that was silently dropped once left two loop authors
wondering why their `key:` did nothing); a key of another type, a misspelt key, a missing required field, a value of
the wrong type or out of range is an InvalidConfig naming `config.<key>`, with a "did you mean" hint where one is
close. The checks that span several fields belong to each evaluator's record (see `record.py`), not here.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any

from verdict.errors import InvalidConfig
from verdict.evaluators.spec import EvaluatorSpec, FieldSpec

__all__ = [
    "COMMON_KEYS",
    "LITTLE_LOOPS_KEYS",
    "MAX_INTEGER",
    "MAX_LIST_ITEMS",
    "check_field",
    "check_fields",
    "evaluator_type",
    "fresh",
    "ignored_keys",
]

COMMON_KEYS = ("type", "source")
"""Keys every configuration may carry whatever its type."""

LITTLE_LOOPS_KEYS = frozenset(
    {
        "operator",
        "target",
        "tolerance",
        "pattern",
        "negate",
        "path",
        "prompt",
        "schema",
        "min_confidence",
        "uncertain_suffix",
        "previous",
        "direction",
        "scope",
        "max_stall",
        "history_file",
        "epsilon",
        "track",
        "max_repeat",
        "baseline_path",
        "auto_promote",
        "min_pairs",
        "pairs",
        "line",
        "error_patterns",
        "key",
    }
)
"""Every key of little-loops' EvaluateConfig. little-loops reads each of them into its config whatever the type and
ignores the ones the type does not use, so a loop file it runs may hold `path:` under `type: output_numeric` (left
over from an edit that changed the type). Such a key is accepted for every type, not checked, and named in the
details' `ignored_keys`; a key little-loops does not know is still refused with a did-you-mean."""


def ignored_keys(spec: EvaluatorSpec, config: Mapping[str, Any]) -> list[str]:
    """The keys of `config` that little-loops knows and `spec` does not use, sorted: accepted and ignored."""
    return sorted(
        key
        for key in config
        if isinstance(key, str) and key in LITTLE_LOOPS_KEYS and key not in COMMON_KEYS and spec.field(key) is None
    )


MAX_LIST_ITEMS = 64
"""Most entries a list field (error_patterns, track, scope, pairs) may hold: each costs a pass over the output, an
interpolation, a git argument or a judge call, and a request of a few megabytes could otherwise hold a million."""


def evaluator_type(config: Mapping[str, Any], specs: Mapping[str, EvaluatorSpec]) -> EvaluatorSpec:
    """The spec of the configuration's `type`; the one check that runs before the exit-code short-circuits.

    The short-circuit rules are defined per type (a `reads_timeouts` type is exempt from the 124 rule, the
    exit-code-aware types from the non-zero rule), so the type must be known before they can apply.
    """
    if not isinstance(config, Mapping):
        raise InvalidConfig("the evaluator configuration must be a mapping", field="config")
    kind = config.get("type")
    if kind is None or kind == "":
        raise InvalidConfig(f"config.type is required; one of {', '.join(sorted(specs))}", field="config.type")
    if not isinstance(kind, str) or kind not in specs:
        close = difflib.get_close_matches(str(kind), specs, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidConfig(
            f"unknown evaluator type {kind!r}{hint}; valid types: {', '.join(sorted(specs))}", field="config.type"
        )
    return specs[kind]


def check_fields(
    spec: EvaluatorSpec, config: Mapping[str, Any], specs: Mapping[str, EvaluatorSpec], *, judge_model: str
) -> dict[str, Any]:
    """Check every key of `config` against `spec` and return the settings with every default filled in.

    Numbers come back as float (integers as int), lists as lists. `source` is always present (None when unset);
    `model` of the judge types defaults to `judge_model`. `specs` (the whole catalogue) only names the owner of a
    key that belongs to another type.
    """
    for key in config:
        if key in COMMON_KEYS or key in LITTLE_LOOPS_KEYS:
            continue
        if not isinstance(key, str) or spec.field(key) is None:
            raise _unknown_key(spec, key, specs)
    settings: dict[str, Any] = {"type": spec.type}
    for field in spec.fields:
        raw = config.get(field.name)
        path = f"config.{field.name}"
        if field.type == "any" and field.name in config:
            _check_json(raw, path)
            settings[field.name] = raw
            continue
        if raw is None or (field.required and field.type == "string" and raw == ""):
            if field.required:
                raise InvalidConfig(f"{spec.type} needs `{field.name}`", field=path)
            settings[field.name] = fresh(field.default)
            continue
        settings[field.name] = check_field(field, raw, path)
    if spec.field("model") is not None and settings["model"] is None:
        settings["model"] = judge_model
    return settings


def fresh(default: Any) -> Any:
    """A default as a value of its own: a list default must not be shared between calls."""
    return list(default) if isinstance(default, list) else default


def _unknown_key(spec: EvaluatorSpec, key: object, specs: Mapping[str, EvaluatorSpec]) -> InvalidConfig:
    name = str(key)
    owners = sorted(evaluator.type for evaluator in specs.values() if evaluator.field(name) is not None)
    if owners:
        return InvalidConfig(
            f"`{name}` is not a key of {spec.type} (it belongs to {', '.join(owners)})", field=f"config.{name}"
        )
    accepted = [field.name for field in spec.fields]
    close = difflib.get_close_matches(name, accepted, n=1) or difflib.get_close_matches(name, _all_keys(specs), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    keys = ", ".join(accepted)
    return InvalidConfig(f"unknown key `{name}` for {spec.type}{hint}; it accepts: {keys}", field=f"config.{name}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


MAX_INTEGER = 2**53
"""Integer fields beyond ±2^53 are refused: a `google.protobuf.Value` (the wire form of numbers, details included)
holds integers exactly only up to there, and past about 1e308 not at all."""


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def check_field(field: FieldSpec, raw: Any, path: str) -> Any:
    """One value checked against its field spec (type, choices, range, list length); raises InvalidConfig at `path`."""
    kind = field.type
    value: Any
    if kind == "string":
        if not isinstance(raw, str):
            raise InvalidConfig(f"{path} must be a string, got {_describe(raw)}", field=path)
        value = raw
    elif kind == "boolean":
        if not isinstance(raw, bool):
            raise InvalidConfig(f"{path} must be true or false, got {_describe(raw)}", field=path)
        value = raw
    elif kind == "number":
        if not _is_number(raw):
            raise InvalidConfig(f"{path} must be a number, got {_describe(raw)}", field=path)
        value = _float(raw, path)
    elif kind == "integer":
        value = _integer(raw)
        if value is None:
            raise InvalidConfig(f"{path} must be an integer, got {_describe(raw)}", field=path)
        _check_integer_range(value, path)
    elif kind == "number|string":
        if isinstance(raw, str):
            return raw
        if not _is_number(raw):
            raise InvalidConfig(f"{path} must be a number or a string, got {_describe(raw)}", field=path)
        value = _float(raw, path)
    elif kind == "string|integer":
        if isinstance(raw, str):
            return raw
        value = _integer(raw)
        if value is None:
            raise InvalidConfig(f"{path} must be a string or an integer, got {_describe(raw)}", field=path)
        _check_integer_range(value, path)
    elif kind == "list[string]":
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise InvalidConfig(f"{path} must be a list of strings, got {_describe(raw)}", field=path)
        return _bounded(list(raw), path)
    elif kind == "object":
        if not isinstance(raw, Mapping):
            raise InvalidConfig(f"{path} must be a mapping, got {_describe(raw)}", field=path)
        _check_json(raw, path)
        return dict(raw)
    elif kind == "list[object]":
        if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
            raise InvalidConfig(f"{path} must be a list of mappings, got {_describe(raw)}", field=path)
        return _bounded(list(raw), path)
    else:  # "any" is handled by check_fields(); the catalogue test runs every field type through here
        raise AssertionError(f"no check for field type {kind!r}")
    if field.choices and value not in field.choices:
        raise InvalidConfig(f"{path} must be one of {', '.join(field.choices)}, got {value!r}", field=path)
    if field.minimum is not None and (math.isnan(value) or value < field.minimum):
        raise InvalidConfig(f"{path} must be at least {field.minimum:g}, got {value!r}", field=path)
    if field.maximum is not None and value > field.maximum:
        raise InvalidConfig(f"{path} must be at most {field.maximum:g}, got {value!r}", field=path)
    return value


def _bounded(items: list[Any], path: str) -> list[Any]:
    if len(items) > MAX_LIST_ITEMS:
        raise InvalidConfig(f"{path} holds {len(items)} entries; at most {MAX_LIST_ITEMS} are accepted", field=path)
    return items


def _float(raw: int | float, path: str) -> float:
    try:
        return float(raw)
    except OverflowError:
        raise InvalidConfig(f"{path} is too large to be a number, got {_describe(raw)}", field=path) from None


def _check_integer_range(value: int, path: str) -> None:
    if abs(value) > MAX_INTEGER:
        raise InvalidConfig(f"{path} must lie between -2^53 and 2^53, got {_describe(value)}", field=path)


def _check_json(value: Any, path: str) -> None:
    """Reject what JSON cannot hold (YAML dates, non-string keys, NaN), since details and judges need JSON."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidConfig(f"{path} must be finite, got {value!r}", field=path)
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidConfig(f"{path} has a non-string key {key!r}", field=path)
            _check_json(item, f"{path}.{key}")
        return
    raise InvalidConfig(f"{path} must be a JSON value, got {_describe(value)}", field=path)


def _all_keys(specs: Mapping[str, EvaluatorSpec]) -> list[str]:
    return sorted({field.name for spec in specs.values() for field in spec.fields} | set(COMMON_KEYS))


def _describe(value: object) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}"
