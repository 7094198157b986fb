"""SQL through sqlglot, in the dialect the fence names, or in each common dialect when it says only `sql`. Pure.

SQL has no one grammar: every engine adds its own statements (procedures, `DO` blocks, `COPY`, psql's `\\d`), and
sqlglot, the maintained multi-dialect parser, reads a statement it does not know as an opaque command or refuses it.
So a refusal alone is not called malformed; only the kinds of error that are errors in every dialect are:

- **an unterminated string, quoted identifier or comment**: sqlglot's tokenizer stops on it in every dialect;
- **unbalanced parentheses**: the `(` and `)` tokens (outside strings and comments) do not pair up;
- **a statement cut at its end**: the parser's complaint is at the code's last token (`WHERE` with no condition,
  `VALUES (1, 2` with nothing after), which is where a parser stands when the text stopped mid-statement.

Anything else every dialect refuses is unverifiable, with the line the parser blamed: intact vendor syntax looks just
like that. psql's meta-commands (`\\echo`, `\\d`) are the client's own lines and are blanked first. sqlglot logs
when it falls back to an opaque command; that log is silenced here, since such a fallback is exactly the case this
module already treats as "parses".
"""

from __future__ import annotations

import logging
import re

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType  # type: ignore[attr-defined]

from verdict.verify.model import CodeCheck, Verdict

__all__ = ["COMMON_DIALECTS", "check_sql", "check_sql_dialect"]

logging.getLogger("sqlglot").setLevel(logging.ERROR)

_META_COMMAND = re.compile(r"(?m)^[ \t]*\\[A-Za-z!?].*$")
"""A psql meta-command line (`\\echo`, `\\d users`, `\\i file`): the client's, not SQL. Blanked, lines kept."""

COMMON_DIALECTS = ("postgres", "mysql", "sqlite", "tsql", "bigquery", "snowflake", "oracle")
"""Tried in order for a block tagged only `sql`; the block is ok as soon as one reads it."""


def check_sql(code: str) -> CodeCheck:
    """The verdict on `code` tagged plain `sql`: ok in any common dialect."""
    return check_sql_dialect(COMMON_DIALECTS, code)


def check_sql_dialect(dialects: tuple[str, ...], code: str) -> CodeCheck:
    """The verdict on `code` read in each of `dialects` in turn (ok as soon as one reads it)."""
    if "\x00" in code:
        return CodeCheck(Verdict.MALFORMED, "a NUL byte in SQL", 0)
    code = _META_COMMAND.sub("", code)
    failures: list[tuple[str, str, int]] = []  # (kind, detail, line); kind "" for an unknown refusal
    for dialect in dialects:
        failure = _read(dialect, code)
        if failure is None:
            return CodeCheck(Verdict.OK)
        failures.append(failure)
    if all(kind for kind, _, _ in failures):
        _, detail, line = failures[0]
        return CodeCheck(Verdict.MALFORMED, detail, line)
    line = min((line for _, _, line in failures if line), default=0)
    return CodeCheck(
        Verdict.UNVERIFIABLE,
        f"no SQL dialect tried ({', '.join(dialects)}) reads line {line or 1}, but nothing is unterminated, "
        "unbalanced or cut: possibly vendor syntax",
        line,
    )


def _read(dialect: str, code: str) -> tuple[str, str, int] | None:
    """None when `dialect` reads `code`; else (kind, detail, line) with kind "" when the error is of no known kind."""
    reader = Dialect.get_or_raise(dialect)
    try:
        tokens = reader.tokenize(code)
    except TokenError:
        return "unterminated", "an unterminated string, quoted name or comment", 0
    depth = 0
    for token in tokens:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth < 0:
                return "unbalanced", "unmatched ')'", token.line
    if depth > 0:
        opened = [token for token in tokens if token.token_type is TokenType.L_PAREN]
        return "unbalanced", "'(' was never closed", opened[-depth].line
    try:
        reader.parser().parse(tokens, code)  # the tokens already read: tokenizing is most of sqlglot's time
    except ParseError as error:
        info = error.errors[0] if error.errors else {}
        line = int(info.get("line") or 0)
        last = tokens[-1] if tokens else None
        description = str(info.get("description") or error).splitlines()[0][:120]
        if last is not None and line == last.line and int(info.get("col") or 0) >= last.end - _line_start(code, line):
            return "cut", f"the statement stops in the middle ({description})", line
        return "", description, line
    except (TokenError, RecursionError, ValueError):
        return "", "the parser gave up", 0
    return None


def _line_start(code: str, line: int) -> int:
    """The offset of the start of one-based `line` in `code`."""
    start = 0
    for _ in range(line - 1):
        start = code.find("\n", start) + 1
    return start
