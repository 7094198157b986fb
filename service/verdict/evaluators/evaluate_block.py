"""The `yaml` member of EvaluatorConfig: a little-loops `evaluate:` block, parsed safely into a plain dict.

The dict then goes through the same validation as a typed member, so both forms give identical results.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from verdict.errors import InvalidConfig, ResourceExhausted

__all__ = ["MAX_EVALUATE_BLOCK_CHARS", "load_evaluate_block", "load_yaml_value"]

MAX_EVALUATE_BLOCK_CHARS = 64 * 1024
"""An evaluate block is a few lines; the cap bounds the time the pure-Python YAML parser spends on the event loop."""


class _EvaluateBlockLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases: `*a` inside `*b` inside `*c` expands exponentially (a "billion laughs"
    document of 1 KB is 10^8 nodes) the first time anything walks the result, such as the JSON of a judge schema."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not accepted in an evaluate block", mark)
        return super().compose_node(parent, index)


def load_evaluate_block(text: str) -> dict[str, Any]:
    """Parse the `yaml` member: a little-loops `evaluate:` block as YAML or JSON, into a dict for `validate`.

    A document holding just `evaluate: {...}` is unwrapped, so a block copied together with its key also works.
    Raises InvalidConfig(field="config.yaml") when the text is not YAML, not a mapping, nested too deeply, uses
    aliases or holds a value Python cannot build (an impossible date, an integer over 4300 digits), and
    ResourceExhausted when it is over MAX_EVALUATE_BLOCK_CHARS.
    """
    if len(text) > MAX_EVALUATE_BLOCK_CHARS:
        raise ResourceExhausted(
            f"config.yaml is {len(text)} characters; the limit is {MAX_EVALUATE_BLOCK_CHARS}",
            reason="CONFIG_TOO_LARGE",
            metadata={"field": "config.yaml", "limit": str(MAX_EVALUATE_BLOCK_CHARS)},
        )
    try:
        document = yaml.load(text, Loader=_EvaluateBlockLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidConfig(f"config.yaml is not valid YAML or JSON: {exc}", field="config.yaml") from None
    except RecursionError:
        raise InvalidConfig("config.yaml is nested too deeply", field="config.yaml") from None
    except (ValueError, OverflowError) as exc:  # PyYAML's constructors: `2024-02-30`, an int over 4300 digits
        raise InvalidConfig(f"config.yaml holds a value that cannot be built: {exc}", field="config.yaml") from None
    if isinstance(document, dict) and set(document) == {"evaluate"} and isinstance(document["evaluate"], dict):
        document = document["evaluate"]
    if not isinstance(document, dict):
        raise InvalidConfig("config.yaml must hold a mapping of evaluate keys (type, ...)", field="config.yaml")
    return document


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)


def load_yaml_value(text: str, field: str) -> Any:
    """Any YAML or JSON value (another tool's configuration: a promptfoo assert list), parsed safely and bounded as
    an evaluate block is: at most MAX_EVALUATE_BLOCK_CHARS, no aliases, errors as InvalidConfig naming `field`.

    JSON is tried first, then libyaml's parser when PyYAML has it (the pure-Python parser takes about 3 ms for a
    five-assertion list, libyaml a tenth of that): its event stream is scanned for aliases before anything is built,
    since the C composer cannot refuse them as `_EvaluateBlockLoader` does.
    """
    if len(text) > MAX_EVALUATE_BLOCK_CHARS:
        raise ResourceExhausted(
            f"{field} is {len(text)} characters; the limit is {MAX_EVALUATE_BLOCK_CHARS}",
            reason="CONFIG_TOO_LARGE",
            metadata={"field": field, "limit": str(MAX_EVALUATE_BLOCK_CHARS)},
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        if _FAST_LOADER is None:
            return yaml.load(text, Loader=_EvaluateBlockLoader)  # noqa: S506 - a SafeLoader subclass
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=_FAST_LOADER)):
            raise InvalidConfig(f"aliases (*name) are not accepted in {field}", field=field)
        return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - libyaml's parser with PyYAML's SafeConstructor
    except yaml.YAMLError as exc:
        raise InvalidConfig(f"{field} is not valid YAML or JSON: {exc}", field=field) from None
    except RecursionError:
        raise InvalidConfig(f"{field} is nested too deeply", field=field) from None
    except (ValueError, OverflowError) as exc:
        raise InvalidConfig(f"{field} holds a value that cannot be built: {exc}", field=field) from None
