"""`${namespace.path}` references in evaluator fields, resolved against the request's `context` Struct.

little-loops resolved these against the executor's live state; here every namespace comes from the request, so the
server answers the same way on any replica. In particular `env` reads the request's `context["env"]` mapping and
never the server's own environment: a loop's variables belong to the loop's machine, and the server's environment
(credentials included) must not leak into a verdict.

Syntax, as little-loops has it:

- `${ns.path}` ends at the first `}`; nesting is impossible. `$${` is a literal `${` and is never resolved.
- `:default=V` gives V when resolution fails (parsed first, so `?` inside V is literal); `?` gives "" on failure;
  `:shell` shell-quotes the value. The three are mutually exclusive.
- A reference without a dot is an error (bare `${messages}` excepted), whatever its suffix.
- Values: None becomes "", anything else `str()`.

References are found by one left-to-right scan that splits a template exactly as little-loops' regular expression
(`${`, then `[^}]+`, then `}`) does; that expression rescans to the end of the text from every `${` with no `}` after
it, which is quadratic time on the event loop. The expansion is bounded by MAX_INTERPOLATED_CHARS.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verdict.errors import InvalidArgument, ResourceExhausted
from verdict.evaluators.values import whole_numbers

__all__ = ["MAX_INTERPOLATED_CHARS", "NAMESPACES", "InterpolationError", "Namespaces", "interpolate"]

NAMESPACES = ("context", "captured", "prev", "result", "state", "loop", "env", "messages", "param", "item")
"""The top-level keys the request's `context` may carry; any other key is rejected as a likely typo. `item` is the
data row an OpenAI grader's `{{item.…}}` reads."""

MAX_INTERPOLATED_CHARS = 16 * 1024 * 1024
"""Longest text one interpolation may produce: `${context.x}` repeated in a template multiplies a large context value,
and a request of a few megabytes could otherwise ask for hundreds of gigabytes."""

_LAST_N = re.compile(r"^last\((\d+)\)$")
_DEFAULT = ":default="
_SHELL = ":shell"


class InterpolationError(Exception):
    """Raised when a reference cannot be resolved; each evaluator decides what a failure means."""


@dataclass(frozen=True)
class Namespaces:
    """The request's interpolation namespaces, validated once per request."""

    values: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> Namespaces:
        """Check the shape of the request's `context` and normalise its numbers.

        A Struct carries every number as a double, so `iteration: 3` arrives as 3.0 and would interpolate as "3.0"
        where little-loops printed "3"; integral floats are turned back into ints here, once.
        Raises InvalidArgument naming `context.<key>` for an unknown namespace or a namespace of the wrong shape.
        """
        values: dict[str, Any] = {}
        for name, value in context.items():
            if name not in NAMESPACES:
                raise InvalidArgument(
                    f"context has no namespace {name!r}; the namespaces are {', '.join(NAMESPACES)}",
                    field=f"context.{name}",
                )
            if value is None:
                continue
            if name == "messages":
                if not isinstance(value, list | Mapping):
                    raise InvalidArgument(
                        "context.messages must be a list of strings or a mapping with `log` and `summary`",
                        field="context.messages",
                    )
            elif not isinstance(value, Mapping):
                raise InvalidArgument(f"context.{name} must be a mapping", field=f"context.{name}")
            values[name] = whole_numbers(value)
        return cls(values)

    def resolve(self, namespace: str, path: str) -> Any:
        """The value at `namespace.path`. Raises InterpolationError when there is none."""
        if namespace not in NAMESPACES:
            raise InterpolationError(f"Unknown namespace: {namespace}")
        if namespace == "messages":
            return self._messages(path)
        if namespace in ("prev", "result") and namespace not in self.values:
            what = "previous state result" if namespace == "prev" else "evaluation result"
            raise InterpolationError(f"No {what} available")
        data = self.values.get(namespace, {})
        if namespace == "env":
            if path not in data:
                raise InterpolationError(f"Environment variable '{path}' not set")
            return data[path]
        if namespace == "state":
            return self._property(data, path, "state", ("name", "iteration"))
        if namespace == "loop":
            if path == "elapsed" and "elapsed" not in data and "elapsed_ms" in data:
                return _format_duration(data["elapsed_ms"])
            return self._property(data, path, "loop", ("name", "started_at", "elapsed_ms", "elapsed"))
        return _walk(data, path, namespace)

    @staticmethod
    def _property(data: Mapping[str, Any], key: str, namespace: str, known: tuple[str, ...]) -> Any:
        if key not in known:
            raise InterpolationError(f"Unknown {namespace} property: {key}")
        if key not in data:
            raise InterpolationError(f"{namespace}.{key} is not in the request context")
        return data[key]

    def _messages(self, path: str) -> str:
        raw = self.values.get("messages", [])
        log = raw.get("log", []) if isinstance(raw, Mapping) else raw
        entries = [str(entry) for entry in log] if isinstance(log, list) else []
        if not path or path == "output":
            return "\n".join(entries)
        last = _LAST_N.match(path)
        if last:
            count = int(last.group(1))
            return "\n".join(entries[-count:]) if count else ""
        if path == "summary":
            summary = raw.get("summary", "") if isinstance(raw, Mapping) else ""
            return "" if summary is None else str(summary)
        raise InterpolationError(f"Unknown messages property: {path!r}")


def _walk(data: Any, path: str, namespace: str) -> Any:
    parts = path.split(".")
    current = data
    for index, part in enumerate(parts):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        else:
            raise InterpolationError(f"Path '{'.'.join(parts[: index + 1])}' not found in {namespace}")
    return current


def _format_duration(milliseconds: Any) -> str:
    """`elapsed` from `elapsed_ms`: "500ms", "30s", "2m", "2m 15s" (little-loops' format)."""
    try:
        ms = int(milliseconds)
    except (TypeError, ValueError):
        raise InterpolationError(f"loop.elapsed_ms is not a number: {milliseconds!r}") from None
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, remainder = divmod(seconds, 60)
    return f"{minutes}m" if remainder == 0 else f"{minutes}m {remainder}s"


def interpolate(template: str, namespaces: Namespaces) -> str:
    """Replace every `${...}` reference in `template`. Raises InterpolationError on the first unresolvable one.

    Splits the template as little-loops does (a `$${` escape first, then a `${` up to the first `}` with at least
    one character between), in linear time. Raises ResourceExhausted (INTERPOLATION_TOO_LARGE) when the result would
    be longer than MAX_INTERPOLATED_CHARS.
    """
    pieces: list[str] = []
    size = 0
    copied = cursor = 0
    close: int | None = None  # the first "}" at or after some position <= the current `${` + 2 (-1: none left)
    while (start := template.find("$", cursor)) != -1:
        cursor = start + 1
        if template.startswith("$${", start):
            replacement, end = "${", start + 3
        elif template.startswith("${", start):
            if close is None or -1 < close < start + 2:
                close = template.find("}", start + 2)
            if close <= start + 2:
                continue
            replacement, end = _replace(template[start + 2 : close], namespaces), close + 1
        else:
            continue
        size += start - copied + len(replacement)
        if size > MAX_INTERPOLATED_CHARS:
            raise ResourceExhausted(
                f"interpolating {template[:60]!r} gives more than {MAX_INTERPOLATED_CHARS} characters",
                reason="INTERPOLATION_TOO_LARGE",
                metadata={"limit": str(MAX_INTERPOLATED_CHARS)},
            )
        pieces += (template[copied:start], replacement)
        copied = cursor = end
    pieces.append(template[copied:])
    return "".join(pieces)


def _replace(reference: str, namespaces: Namespaces) -> str:
    expression = reference
    default: str | None = None
    optional = shell = False
    if _DEFAULT in expression:
        expression, default = expression.split(_DEFAULT, 1)
        if expression.endswith(("?", _SHELL)):
            raise InterpolationError(f"Ambiguous suffix in ${{{reference}}}: the suffixes are mutually exclusive")
    elif expression.endswith("?"):
        optional = True
        expression = expression[:-1]
    elif expression.endswith(_SHELL):
        shell = True
        expression = expression[: -len(_SHELL)]
    if (optional or shell) and expression.endswith(("?", _SHELL)):
        raise InterpolationError(f"Ambiguous suffix in ${{{reference}}}: the suffixes are mutually exclusive")
    if expression == "messages":
        namespace, path = "messages", ""
    elif "." not in expression:
        raise InterpolationError(f"Invalid variable: ${{{expression}}} (expected namespace.path)")
    else:
        namespace, path = expression.split(".", 1)
    try:
        value = namespaces.resolve(namespace, path)
    except InterpolationError:
        if default is not None:
            return default
        if optional:
            return ""
        raise
    if value is None:
        return ""
    text = str(value)
    return shlex.quote(text) if shell else text
