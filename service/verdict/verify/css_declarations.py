"""A CSS declaration without its colon, found lexically (`color red;`, `{position absolute; top: 0}`). Pure, linear.

Inside a block, what ends at `;` or `}` is a declaration (`property: value`) or an at-rule statement (`@apply x;`);
what ends at `{` is a nested rule's selector (`&:hover {`, `a:hover {`, `@media (x) {`), whose colons mean something
else. So a segment that ends at `;` or `}`, starts like a property name, and holds no colon is a declaration whose
colon is gone. tree-sitter's CSS grammar recovers from one in many shapes (a one-line rule, the last declaration
without its `;`, a value starting with `-`) and reports an ERROR that says nothing about a colon; this scan says it.
Consulted only when no form of the grammar reads the code. Strings and comments are blanked first.
"""

from __future__ import annotations

import re

__all__ = ["colonless_declaration"]

_HIDDEN = re.compile(r"""/\*.*?(?:\*/|\Z)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?""", re.S)
_BOUNDARY = re.compile(r"[{};]")
_DECLARATION = re.compile(r"-{0,2}[A-Za-z][\w-]*[ \t]+[^\s:;{}][^:;{}]*")
"""`property value`: what a declaration is once its colon is lost (a name, blanks, a value, no colon anywhere)."""


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def colonless_declaration(code: str) -> int:
    """The one-based line of the first declaration without its colon in `code`, or 0."""
    if "{" not in code:
        return 0
    text = _HIDDEN.sub(_blank, code) if ("/*" in code or '"' in code or "'" in code) else code
    depth = 0
    start = 0
    for match in _BOUNDARY.finditer(text):
        char = match.group(0)
        if depth > 0 and char != "{":
            segment = text[start : match.start()]
            stripped = segment.strip()
            if stripped and _DECLARATION.fullmatch(stripped):
                offset = start + len(segment) - len(segment.lstrip())
                return text.count("\n", 0, offset) + 1
        depth += 1 if char == "{" else -1 if char == "}" else 0
        depth = max(depth, 0)
        start = match.end()
    return 0
