"""Unterminated string literals, found lexically: C, C++, Java, Go, Rust, JavaScript, TypeScript. Pure, linear.

A deleted closing quote is the one breakage bracket counts cannot see: the string swallows whatever it reaches, and a
tree-sitter grammar recovers with balanced brackets, often far from the quote. A lexer sees it directly, because every
one of these languages says where a string may end:

- a `"` (or JavaScript `'`) string may not hold a raw newline (a `\\` before it continues the line): one that reaches
  the end of its line unclosed is unterminated, at its own line;
- a string that may span lines (Rust's `"`, Go's raw `` `...` ``, Java's text blocks, C++'s `R"d(...)d"`, JavaScript's
  templates) is unterminated when the code ends inside it. In Rust, a lost quote pairs the string with the next
  string's opener, every later string flips inside out, and the last one runs to the end: the parity shows it.

The lexer knows what would otherwise be read as a quote: comments, character literals (`'"'`), Rust lifetimes and
labels (`'a`), C++ digit separators (`1'000`), raw strings whose quotes are content, regular-expression literals in
JavaScript. It is consulted only when no fragment form of the grammar reads the code, so intact code the grammar reads
is never asked about. Each step is one anchored regular expression from the current position, so the scan is linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LEXED", "Unterminated", "unterminated"]


@dataclass(frozen=True)
class Unterminated:
    """A string literal that never closes: its one-based line, whether it ran to the end of its line (rather than
    to the end of the code), and how it opened."""

    line: int
    at_line_end: bool
    opener: str


_SPECIAL = {
    "c": re.compile(r"""["'/]|(?<![\w])(?:u8|u|U|L)?R"(?=[^()\\\s"]{0,16}\()"""),
    "java": re.compile(r"""["'/]"""),
    "go": re.compile(r"""["'/`]"""),
    "rust": re.compile(r"""["'/]|(?<![\w])[bc]?r#*\""""),
    "javascript": re.compile(r"""["'/`{}]"""),
}
LEXED = {
    "c": "c",
    "cpp": "c",
    "java": "java",
    "go": "go",
    "rust": "rust",
    "javascript": "javascript",
    "typescript": "javascript",
}
"""The languages this module lexes, and the lexer each uses."""

_LINE_STRING = {
    '"': re.compile(r'"(?:[^"\\\n]|\\.)*(")?', re.S),
    "'": re.compile(r"'(?:[^'\\\n]|\\.)*(')?", re.S),
}
"""A one-line string: a backslash escapes any character, the newline of a line continuation included."""
_MULTILINE_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
_CHAR = {
    "c": re.compile(r"'(?:[^'\\\n]|\\.){1,4}'"),
    "java": re.compile(r"'(?:[^'\\\n]|\\u+[0-9A-Fa-f]{4}|\\.)'"),
    "go": re.compile(r"'(?:[^'\\\n]|\\.[^'\n]{0,9})'"),
    "rust": re.compile(r"'(?:[^'\\\n]|\\u\{[0-9A-Fa-f_]{1,8}\}|\\x[0-9A-Fa-f]{2}|\\.)'"),
}
_LINE_COMMENT = re.compile(r"//[^\n]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_TEXT_BLOCK = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)', re.S)
_REGEX = re.compile(r"/(?![*/>])(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-z]*")
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%~^")
"""What a regular expression may follow (`<` left out: `</div>` in JSX is a closing tag)."""
_REGEX_KEYWORDS = re.compile(r"(?<![\w$])(?:return|typeof|case|do|else|in|of|void|yield|await|delete|throw|new)$")
_TEMPLATE_STOP = re.compile(r"[\\`$]")
_RUST_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def unterminated(language: str, code: str) -> Unterminated | None:
    """The first string literal of `code` that never closes, or None (also for a language this module does not lex)."""
    lexer = LEXED.get(language)
    if lexer is None or ('"' not in code and "'" not in code and "`" not in code):
        return None
    return _scan(lexer, code)


def _line(code: str, position: int) -> int:
    return code.count("\n", 0, position) + 1


def _scan(lexer: str, code: str) -> Unterminated | None:
    special = _SPECIAL[lexer]
    braces: list[int] = []  # JavaScript: brace depth at each open `${`, innermost last
    depth = 0
    position = 0
    end = len(code)
    while position < end:
        match = special.search(code, position)
        if match is None:
            return None
        start = match.start()
        char = code[start]
        if char == "/":
            token = _LINE_COMMENT.match(code, start) or _BLOCK_COMMENT.match(code, start)
            if token is None and lexer == "javascript" and _regex_may_start(code, start):
                token = _REGEX.match(code, start)
            position = token.end() if token else start + 1
            continue
        if lexer == "javascript" and char in "{}":
            if char == "{":
                depth += 1
            elif braces and depth == braces[-1]:
                braces.pop()  # the `}` that closes a template's `${`: the template goes on
                position = _template(code, start + 1, braces, depth)
                if position < 0:
                    return Unterminated(_line(code, start), False, "`")
                continue
            else:
                depth -= 1
            position = start + 1
            continue
        if char == "`":
            if lexer == "go":
                close = code.find("`", start + 1)
                if close < 0:
                    return Unterminated(_line(code, start), False, "`")
                position = close + 1
                continue
            position = _template(code, start + 1, braces, depth)
            if position < 0:
                return Unterminated(_line(code, start), False, "`")
            continue
        if char == "'":
            if lexer == "javascript":
                found = _line_string(code, start, "'")
                if isinstance(found, Unterminated):
                    return found
                position = found
                continue
            token = _CHAR[lexer].match(code, start)
            position = token.end() if token else start + 1  # a lifetime, a label, a digit separator
            continue
        opener = match.group(0)
        if lexer == "c" and opener.endswith('R"'):
            delimiter = re.match(r'[^()\\\s"]{0,16}', code[start + len(opener) :])
            assert delimiter is not None
            closer = ")" + delimiter.group(0) + '"'
            close = code.find(closer, start + len(opener) + len(delimiter.group(0)) + 1)
            if close < 0:
                return Unterminated(_line(code, start), False, opener)
            position = close + len(closer)
            continue
        if lexer == "rust" and opener != '"':  # r"...", r#"..."#, br"...": no escapes, ends at `"` and its `#`s
            hashes = opener.count("#")
            close = code.find('"' + "#" * hashes, start + len(opener))
            if close < 0:
                return Unterminated(_line(code, start), False, opener)
            position = close + 1 + hashes
            continue
        if lexer == "java" and code.startswith('"""', start):
            token = _TEXT_BLOCK.match(code, start)
            assert token is not None
            if not token.group(0).endswith('"""') or token.end() - start < 6:
                return Unterminated(_line(code, start), False, '"""')
            position = token.end()
            continue
        if lexer == "rust":
            token = _MULTILINE_STRING.match(code, start)
            assert token is not None
            if len(token.group(0)) < 2 or not token.group(0).endswith('"'):
                return Unterminated(_rust_blame(code, start), False, '"')
            position = token.end()
            continue
        found = _line_string(code, start, '"')
        if isinstance(found, Unterminated):
            return found
        position = found
    return None


def _line_string(code: str, start: int, quote: str) -> int | Unterminated:
    """Where a one-line string starting at `start` ends, or the Unterminated it is."""
    token = _LINE_STRING[quote].match(code, start)
    assert token is not None
    if token.group(1) is None:
        return Unterminated(_line(code, start), True, quote)
    return token.end()


def _template(code: str, position: int, braces: list[int], depth: int) -> int:
    """Past the end of a JavaScript template's text from `position` (after its `` ` `` or a `${...}`'s `}`): the
    position after its closing `` ` ``, or after a `${` (pushing `depth` onto `braces`), or -1 when it never closes."""
    end = len(code)
    while position < end:
        char = code[position]
        if char == "\\":
            position += 2
        elif char == "`":
            return position + 1
        elif char == "$" and code.startswith("${", position):
            braces.append(depth)
            return position + 2
        else:
            next_stop = _TEMPLATE_STOP.search(code, position)
            if next_stop is None:
                return -1
            position = next_stop.start() if next_stop.start() > position else position + 1
    return -1


def _regex_may_start(code: str, slash: int) -> bool:
    """Whether a `/` at `slash` can open a regular expression (after an operator or a keyword), not divide."""
    before = code[max(0, slash - 40) : slash].rstrip()
    if not before:
        return True
    if before[-1] in _REGEX_AFTER:
        return True
    return bool(_REGEX_KEYWORDS.search(before))


def _rust_blame(code: str, last_opener: int) -> int:
    """The line a lost Rust quote most likely sits on: the first string (as the lexer paired them) that swallowed a
    newline, else the last opener (the string that ran to the end)."""
    position = 0
    while True:
        match = _RUST_STRING.search(code, position, last_opener)
        if match is None:
            return _line(code, last_opener)
        if "\n" in match.group(0) and not re.search(r"\\\n", match.group(0)):
            return _line(code, match.start())
        position = match.end()
