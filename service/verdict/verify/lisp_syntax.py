"""The Lisp family (Scheme, Racket, Common Lisp, Emacs Lisp, Clojure, Hy): balanced forms. Pure and linear.

A Lisp program is a sequence of forms, and its only syntax that a cut or a lost delimiter can break is the nesting of
`(` `[` `{` with `)` `]` `}` and the strings. So the block is read by one lexer that knows what hides a bracket in
each dialect — strings (`"…"` with backslash escapes), line comments (`;`), block comments (`#| … |#`, nested),
character literals (`#\\(` in Scheme, Racket and Common Lisp; `\\(` in Clojure; `?\\(` in Emacs Lisp) — and the
brackets it leaves must pair. Malformed: a bracket that never closes, a closer that closes nothing or the wrong
opener, a string that never ends. Everything else is ok: names, arity and macros are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from verdict.verify.model import CodeCheck, Verdict

__all__ = ["brackets", "check_lisp"]

_PAIRS = {")": "(", "]": "[", "}": "{"}
_SIGNIFICANT = re.compile(r'[";#\\?()\[\]{}]')
_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENERS = frozenset("([{")


def brackets(code: str) -> Iterator[tuple[str, int]]:
    """Every bracket outside strings, comments and character literals, with its offset; a string that never ends
    yields `"` at its opening quote, last."""
    index, length = 0, len(code)
    while index < length:
        found = _SIGNIFICANT.search(code, index)
        if found is None:
            return
        index = found.start()
        char = code[index]
        if char == '"':
            start = index
            end = _STRING_END.match(code, index + 1)
            if end is None:
                yield '"', start
                return
            index = end.end() - 1
        elif char == ";":
            newline = code.find("\n", index)
            index = length if newline < 0 else newline
        elif char == "#" and code.startswith("#|", index):
            depth, index = 1, index + 2
            while index < length and depth:
                if code.startswith("|#", index):
                    depth, index = depth - 1, index + 2
                elif code.startswith("#|", index):
                    depth, index = depth + 1, index + 2
                else:
                    index += 1
            continue
        elif char == "#" and code.startswith("#\\", index):
            index += 2  # the character itself, then any name letters (#\space) as ordinary text
        elif char == "\\" or (char == "?" and code.startswith("?\\", index)):
            index += 2 if char == "\\" else 3
            continue
        elif char in _OPENERS or char in _PAIRS:
            yield char, index
        index += 1


def check_lisp(code: str) -> CodeCheck:
    """Ok when every form is balanced; malformed at the bracket or string that is not."""
    if "\x00" in code:
        return CodeCheck(Verdict.MALFORMED, "a NUL byte in source code", 0)
    stack: list[tuple[str, int]] = []
    for char, offset in brackets(code):
        if char == '"':
            return CodeCheck(Verdict.MALFORMED, "a string that never ends", _line(code, offset))
        if char in _OPENERS:
            stack.append((char, offset))
        elif not stack:
            return CodeCheck(Verdict.MALFORMED, f"unmatched '{char}'", _line(code, offset))
        elif stack[-1][0] != _PAIRS[char]:
            opener, opened = stack[-1]
            return CodeCheck(
                Verdict.MALFORMED,
                f"'{opener}' is closed by '{char}' on line {_line(code, offset)}: its own closer is missing",
                _line(code, opened),
            )
        else:
            stack.pop()
    if stack:
        opener, opened = stack[-1]
        return CodeCheck(Verdict.MALFORMED, f"'{opener}' was never closed", _line(code, opened))
    return CodeCheck(Verdict.OK)


def _line(code: str, offset: int) -> int:
    return code.count("\n", 0, offset) + 1
