"""`{{ name.path }}` templates, the substitution promptfoo's assertion values and OpenAI's grader fields use.

Both tools hand a full template engine (nunjucks, jinja-like) whatever a config holds; a config here is a caller's,
so this engine does one thing: replace `{{ dotted.path }}` (spaces allowed inside the braces) with the value at that
path, walking mappings by key and lists by index. No filters, no expressions, no loops, nothing evaluated: a
placeholder that is not a plain dotted path is left as written. A string value is inserted as is, anything else as
compact JSON; a path that does not resolve renders as the empty string, as nunjucks renders an undefined variable.
The result is bounded (MAX_RENDERED_CHARS), so `{{a}}{{a}}...` over a large value cannot grow without limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from verdict.errors import InvalidArgument

__all__ = ["MAX_RENDERED_CHARS", "TemplateTooLarge", "lookup", "render"]

MAX_RENDERED_CHARS = 4 * 1024 * 1024
"""Longest rendered text: a few request sizes, so a template may quote the output a few times but not a million."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}")


class TemplateTooLarge(InvalidArgument):
    """A rendered template would exceed MAX_RENDERED_CHARS."""


def lookup(namespaces: Mapping[str, Any], path: str) -> Any:
    """The value at the dotted `path` (mapping keys, list indexes), or None when it does not resolve."""
    value: Any = namespaces
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(
    template: str, namespaces: Mapping[str, Any], *, field: str = "config", unresolved: list[str] | None = None
) -> str:
    """`template` with each `{{ path }}` replaced by its value in `namespaces` (see the module docstring); each
    path that did not resolve is appended to `unresolved` when a list is given.

    Raises TemplateTooLarge (INVALID_ARGUMENT naming `field`) when the result would pass MAX_RENDERED_CHARS."""
    if "{{" not in template:
        return template
    pieces: list[str] = []
    size = 0
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        value = lookup(namespaces, match.group(1))
        if value is None and unresolved is not None:
            unresolved.append(match.group(1))
        piece = template[position : match.start()] + _text(value)
        size += len(piece)
        if size > MAX_RENDERED_CHARS:
            raise TemplateTooLarge(
                f"{field} renders to more than {MAX_RENDERED_CHARS} characters",
                field=field,
                reason="TEMPLATE_TOO_LARGE",
            )
        pieces.append(piece)
        position = match.end()
    pieces.append(template[position:])
    return "".join(pieces)
