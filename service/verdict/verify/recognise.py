"""The language of an untagged block, on unmistakable evidence only; and lines that are no code at all. Pure.

A block without an info string is usually code (a C++ file with `#include`, a Python function, shell commands), but
it may as well be a table, ASCII art, program output, prose or music notation. A guess applied to the wrong text is a
false alarm, so a language is recognised only on evidence that text in no other language carries:

- a shebang (`#!/bin/bash`, `#!/usr/bin/env python3`);
- a preprocessor `#include <...>` line (C++ when `std::`, `namespace`, `template` or `class` appear, else C);
- `<?php`, `<?xml`, `<!DOCTYPE html>` or `<html` first;
- a Python header first (`def f(...):`, `class A:`, `import x`, `from x import y`, a decorator) with no `;`-ended
  or brace-ended lines;
- a JSON document: `{` ... `}` (or `[` ... `]`) whose first member is a `"key":`;
- Go's `package x` with a `func`, Rust's `fn main()` or `use std::`, Java's `public class`, C#'s `using System;`;
- every line a shell command of a well-known tool (`git`, `pip`, `npm`, `docker`, `cd`, `sudo` ...).

A guessed language is checked, and an `ok` counts; a failure does not (`Recognition` is never charged: the error may
be the guess's), except what the rules decide without parsing (an unterminated fence is still truncated).

`not_code` names a line that is ASCII art, a table or program output: the excuse a tagged block gets when its
parser fails exactly there (`css` on a box drawing, `python` on a numpy printout).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Recognition", "not_code", "recognise", "shell_command"]


@dataclass(frozen=True)
class Recognition:
    """The record name an untagged block is checked as, and the evidence, in words."""

    language: str
    evidence: str


_SHEBANG = re.compile(r"\A#![ \t]*(?:/usr)?(?:/local)?/bin/(?:env[ \t]+)?(\w+)")
_SHELLS = {"bash": "shell", "sh": "shell", "zsh": "shell", "python": "python", "python3": "python"}
_INCLUDE = re.compile(r"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"][\w./+-]+[>\"]")
_CPP = re.compile(r"std::|\bnamespace\b|\btemplate\s*<|\bclass\s+\w+|#include\s*<(?:iostream|vector|string|map)>")
_PYTHON_HEAD = re.compile(
    r"\A(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(.*\)[ \t]*(?:->.*)?:[ \t]*$|\Aclass[ \t]+\w+[ \t]*(?:\(.*\))?[ \t]*:[ \t]*$"
    r"|\Aimport[ \t]+\w[\w.]*(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*\w[\w.]*)*[ \t]*$"
    r"|\Afrom[ \t]+\.*[\w.]*[ \t]+import[ \t]+(?:\w|\(|\*)|\A@\w[\w.]*(?:\(.*\))?[ \t]*$"
)
_BRACE_LINE = re.compile(r"(?m)[;{][ \t]*$")
_JSON_START = re.compile(r'\A\s*(?:\{\s*"[^"\n]*"\s*:|\[\s*(?:\{\s*"[^"\n]*"\s*:|"[^"\n]*"\s*[,\]]))')
_HTML_START = re.compile(r"\A\s*(?:<!doctype\s+html|<html[\s>])", re.IGNORECASE)
_COMMAND = re.compile(
    r"^(?:sudo[ \t]+)?(?:git|pip3?|python3?[ \t]+-m[ \t]+pip|npm|npx|yarn|pnpm|docker|docker-compose|kubectl|helm"
    r"|brew|apt|apt-get|dnf|yum|pacman|conda|cargo|go|rustup|dotnet|mvn|gradle|make|cmake|cd|mkdir|curl"
    r"|wget|chmod|chown|ls|cp|mv|rm|echo|source|touch|cat|tar|ssh|scp|systemctl|uv|poetry|pipx|gem|bundle|rails"
    r"|composer|php[ \t]+artisan|flutter|ng|vue|nvm|node|deno|bun|terraform|aws|gcloud|az)"
    r"(?:[ \t]+[^\s=(:+*/%<>!&|^].*)?$"
)
_EXPORT = re.compile(r"^export[ \t]+[A-Za-z_]\w*=")
_COMMENT = re.compile(r"^[ \t]*#(?!!)")
_BOX = re.compile(r"[─-╿▀-▟]|^[ \t]*[+|][-=+|]{3,}|[-=]{3,}[+|]|\|[ \t]*:?-{3,}:?[ \t]*\|")
"""Box drawing, `+---+` frames, `|---|` table rules."""
_ART = re.compile(r"^[\s|/\\_\-=+*^~<>.:'`o#()\[\]]*$")
_OUTPUT = re.compile(
    r"^[ \t]*\[*\[[ \t]*-?\d[\d.e+-]*(?:[ \t]+-?\d[\d.e+-]*)+[ \t]*\]*$"  # numpy: [[1 2 3] or [ 0.1  0.2]
    r"|^[ \t]*(?:Out\[\d+\]|dtype[:=]|Name:[ \t]\w+,[ \t]dtype:|Traceback \(most recent call last\))"
    r"|^[ \t]*\d+[ \t]{2,}\S"  # a pandas row: index, then columns
)


def shell_command(line: str) -> bool:
    """Whether `line` (a `$ ` prompt dropped) is a command of a well-known command-line tool: `export NAME=value` or
    a tool's name and arguments, not ending the way statements of C-family languages and PHP end (`;`, `{`, `,`),
    so `echo "x";` and `export function f() {` are not commands."""
    stripped = line.strip()
    if stripped.startswith("$ "):
        stripped = stripped[2:].lstrip()
    if _EXPORT.match(stripped):
        return True
    return bool(_COMMAND.match(stripped)) and not stripped.endswith((";", "{", ",", "=>", "("))


def recognise(body: str) -> Recognition | None:
    """The language `body` is unmistakably written in, or None (it stays unverifiable)."""
    text = body.lstrip("\ufeff")
    stripped = text.strip()
    if not stripped:
        return None
    lines = [line for line in stripped.splitlines() if line.strip()]
    first = lines[0].strip()
    code = _first_code_line(lines)
    shebang = _SHEBANG.match(stripped)
    if shebang and shebang.group(1) in _SHELLS:
        return Recognition(_SHELLS[shebang.group(1)], f"a #!{shebang.group(1)} line")
    if first.startswith("<?php"):
        return Recognition("php", "<?php first")
    if first.startswith("<?xml"):
        return Recognition("xml", "an <?xml declaration first")
    if _HTML_START.match(stripped):
        return Recognition("html", "a doctype or <html> first")
    if _INCLUDE.search(text):
        if _CPP.search(text):
            return Recognition("cpp", "#include lines and C++ (std::, namespace, template or class)")
        return Recognition("c", "#include lines")
    if _PYTHON_HEAD.match(code) and not _BRACE_LINE.search(text):
        return Recognition("python", f"a Python header first ({code[:40]})")
    if _JSON_START.match(stripped) and stripped[-1] in "}]" and (stripped[0] == "{") == (stripped[-1] == "}"):
        return Recognition("json", "a JSON document")
    if re.match(r"package\s+\w+\s*$", code) and re.search(r"(?m)^(?:func|import|type|var|const)\b", text):
        return Recognition("go", "a package line, then Go declarations")
    if _RUST_USE.search(text) or (_RUST_FN.search(text) and _RUST_BODY.search(text)):
        return Recognition("rust", "use of a crate path (std::, core::, crate::) or fn items with Rust bodies")
    if re.search(r"(?m)^\s*public\s+(?:final\s+)?class\s+\w+", text) and re.search(
        r"(?m)^import\s+java\.|System\.out", text
    ):
        return Recognition("java", "a public class with java imports")
    if re.search(r"(?m)^using\s+System(?:\.\w+)*\s*;", text):
        return Recognition("csharp", "using System;")
    if _HTML_ELEMENT.match(stripped) and stripped.endswith(">") and "</" in stripped:
        return Recognition("html", "an HTML element first and an end tag last")
    if _SQL_START.match(code) and stripped.endswith(";"):
        return Recognition("sql", "an upper-case SQL statement ending in ;")
    if _YAML_KEYS.search(stripped) and not _BRACE_LINE.search(text):
        return Recognition("yaml", "Kubernetes, Compose or CI top-level keys")
    if _TOML_TABLE.match(code) and _TOML_KEY.search(text):
        return Recognition("toml", "a [table] header and key = value lines")
    code_lines = [line for line in lines if not _COMMENT.match(line)]
    if code_lines and all(shell_command(line) for line in code_lines):
        return Recognition("shell", "every line a command of a well-known tool")
    return None


_HTML_ELEMENT = re.compile(
    r"<(?:div|p|span|ul|ol|table|form|button|section|nav|header|footer|main|article|aside|head|body|script|style"
    r"|h[1-6]|label|select|textarea|template|iframe|video|canvas|dialog|details)[\s>]",
    re.IGNORECASE,
)
_SQL_START = re.compile(
    r"(?:SELECT\s|INSERT\s+INTO\s|CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW|INDEX|UNIQUE\s+INDEX|FUNCTION|PROCEDURE"
    r"|TRIGGER|SCHEMA|DATABASE)\s|UPDATE\s+\S+\s+SET\s|DELETE\s+FROM\s|ALTER\s+TABLE\s|DROP\s+(?:TABLE|INDEX|VIEW)\s"
    r"|WITH\s+(?:RECURSIVE\s+)?\w+\s+AS\s*\()"
)
_YAML_KEYS = re.compile(
    r"(?m)\A(?:apiVersion:[ \t]*\S+\s*\n(?:.*\n)*?kind:[ \t]*\w+|services:[ \t]*\n[ \t]+[\w.-]+:|on:[ \t]*"
    r"(?:\n[ \t]+\w+:|\[)(?:.*\n)*?jobs:)"
)
_TOML_TABLE = re.compile(r"\[(?:package|project|tool\.[\w.-]+|dependencies|dev-dependencies|workspace|build-system)\]$")
_TOML_KEY = re.compile(r'(?m)^[A-Za-z0-9_.-]+[ \t]*=[ \t]*(?:"|\[|\{|\d|true|false)')
_RUST_USE = re.compile(r"(?m)^(?:pub(?:\([\w:]+\))?[ \t]+)?use[ \t]+(?:std|core|alloc|crate|super|self)::")
_RUST_FN = re.compile(r"(?m)^[ \t]*(?:pub(?:\([\w:]+\))?[ \t]+)?(?:const[ \t]+|unsafe[ \t]+|async[ \t]+)*fn[ \t]+\w+")
_RUST_BODY = re.compile(r"&self|&mut[ \t]|\blet[ \t]+mut\b|\)[ \t]*->[ \t]*[\w&(\[]|\bimpl\b.*\bfor\b")
_LINE_COMMENT = re.compile(r"^[ \t]*(?://|#(?![!\[])|--|/\*|\*)")
_DOCSTRING = re.compile(r'^[ \t]*[rRuUbB]?("""|\'\'\')')


def _first_code_line(lines: list[str]) -> str:
    """The first line that is not a comment, a license block or a leading docstring (stripped)."""
    index = 0
    while index < len(lines) and _LINE_COMMENT.match(lines[index]):
        index += 1
    if index < len(lines):
        docstring = _DOCSTRING.match(lines[index])
        if docstring:
            quote = docstring.group(1)
            rest = lines[index].split(quote, 1)[1]
            if quote not in rest:
                index += 1
                while index < len(lines) and quote not in lines[index]:
                    index += 1
            index += 1
            while index < len(lines) and _LINE_COMMENT.match(lines[index]):
                index += 1
    return lines[index].strip() if index < len(lines) else ""


def not_code(line: str) -> str:
    """What `line` is when it is ASCII art, a table rule or program output ("" when it may be code)."""
    if _BOX.search(line):
        return "a table or box drawing"
    if _OUTPUT.match(line):
        return "program output"
    stripped = line.strip()
    if len(stripped) >= 4 and _ART.match(stripped) and len(set(stripped) - set(" ")) >= 2:
        return "ASCII art"
    return ""
