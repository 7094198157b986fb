"""Python blocks, checked by `ast.parse`: it builds a syntax tree and evaluates nothing, so it is safe on any input.

Real Markdown fails a naive `ast.parse` 40 % of the time although nothing is broken (reference §3.1): doctest sessions,
IPython magics, shell prompts, indented fragments. Each is handled before a block is called malformed:

- a session (`>>>` / `...` or IPython `In [1]:` prompts) is parsed example by example, prompts stripped and output
  lines dropped, as doctest itself reads it; an example that runs on into an output-looking line is unverifiable
  (people omit the `...` prompts), not malformed; an example's opening magic line is dropped; prompts that follow code
  (a docstring's examples in a block that does not parse) never make the block ok;
- IPython `!shell` and `%magic` lines and `$ ` shell-prompt lines are dropped; a cell magic such as `%%bash` makes the
  block unverifiable (the cell is not Python);
- an indented fragment is retried dedented, then inside `if 1:`;
- a parser that gives up (MemoryError, RecursionError, "too many nested parentheses" and the like) is an implementation
  limit, not a syntax error: unverifiable with the cause, never malformed;
- a syntax error on a line that uses grammar newer than the running interpreter (PEP 695/696/701/750/758/798/810)
  is unverifiable: a newer Python accepts it;
- a syntax error on a line holding a placeholder (`<your-api-key>`, `…`) is unverifiable;
- a traceback pasted into a Python fence is unverifiable: it is output, not source.

The grammar is the running interpreter's (`GRAMMAR`); docs/verification.md states the policy.
"""

from __future__ import annotations

import ast
import platform
import re
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from verdict.verify.excuses import blank_python_strings, near, other_language
from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.snippet import Snippet

__all__ = ["GRAMMAR", "NEWER_GRAMMAR", "GrammarFeature", "check_python", "newer_grammar_feature"]

GRAMMAR = sys.version_info[:2]
"""The (major, minor) of the grammar `ast.parse` accepts: the interpreter the server runs on."""


@dataclass(frozen=True)
class GrammarFeature:
    """Syntax a newer Python accepts; `pattern` recognises a line that uses it."""

    since: tuple[int, int]
    name: str
    pattern: re.Pattern[str]
    literal: bool = False
    """The feature is a kind of string literal: an error anywhere after its prefix on the line is in it."""


NEWER_GRAMMAR = (
    GrammarFeature(
        (3, 12),
        "PEP 695 type parameters",
        re.compile(
            r"^\s*(?:type\s+[A-Za-z_]\w*\s*[\[=]|(?:async\s+)?def\s+[A-Za-z_]\w*\s*\[|class\s+[A-Za-z_]\w*\s*\[)"
        ),
    ),
    GrammarFeature((3, 12), "PEP 701 f-strings", re.compile(r"(?<![\w.])(?:[rR][fF]|[fF][rR]?)['\"]"), literal=True),
    GrammarFeature(
        (3, 13),
        "PEP 696 type parameter defaults",
        re.compile(r"^\s*(?:type|(?:async\s+)?def|class)\s+[A-Za-z_]\w*\s*\[[^\]]*="),
    ),
    GrammarFeature(
        (3, 14), "PEP 750 template strings", re.compile(r"(?<![\w.])(?:[rR][tT]|[tT][rR]?)['\"]"), literal=True
    ),
    GrammarFeature((3, 14), "PEP 758 except without parentheses", re.compile(r"^\s*except\s*\*?\s*[^\s(:][^:]*,")),
    GrammarFeature((3, 15), "PEP 810 lazy imports", re.compile(r"^\s*lazy\s+(?:import|from)\s")),
    GrammarFeature(
        (3, 15),
        "PEP 798 unpacking in comprehensions",
        re.compile(r"[\[{(]\s*\*{1,2}\s*[\w.]+(?:\([^()]*\)|\[[^\[\]]*\])?\s+(?:async\s+)?for\b"),
    ),
)
"""Grammar added after Python 3.11 (the oldest the server supports), newest last. Add a row when a Python ships."""

_LIMITS = re.compile(
    r"too many nested parentheses|too many levels of indentation|too many nested f-strings|nested too deeply"
    r"|exceeds the limit|too many statically nested blocks|too complex",
    re.IGNORECASE,
)
_INCOMPLETE = re.compile(
    r"was never closed|unexpected EOF|expected an indented block|unterminated triple-quoted|incomplete input"
)
_PLACEHOLDER = re.compile(
    r"<[A-Za-z_.][\w .:/-]*>|…|(?<=\()\s*\.\.\.\s*(?=\))"
    r"|(?:(?<=,)|^)[ \t]*\.\.\.[ \t]*(?=[,}\]]|$)"
)
"""`<your-api-key>`, `…`, `(...)` standing for arguments (`def solve(...):`), and `...` standing for more entries of
a literal (`{"a": 1, ...}`, a `...` line in a dict); a bare `...` is Ellipsis, so only where the parser failed."""
_BRACKET_ERROR = re.compile(r"does not match|was never closed|unmatched")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$", re.MULTILINE)
_DOCTEST = re.compile(r"^\s*(>>>|\.\.\.)(?: |$)")
_IPYTHON = re.compile(r"^\s*(?:In \[\d*\]:|\.\.\.:)(?: |$)")
_MAGIC_OR_PROMPT = re.compile(r"^\s*(?:[!%]|\$ )")
_CELL_MAGIC = re.compile(r"^\s*%%(\w+)")
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "writefile"})


def check_python(code: str) -> CodeCheck:
    """The verdict on one Python block's code. Pure; never raises."""
    whole = Snippet(code)
    failure = _parse(whole)
    if failure is None:
        return CodeCheck(Verdict.OK)
    if failure.limit or not failure.syntax:
        return failure.judge(whole)
    lines = code.split("\n")
    if _is_session(code) and _session_at(lines, failure.line):
        return _check_session(code)
    if _in_traceback(lines, failure.line):
        return CodeCheck(Verdict.UNVERIFIABLE, "a Python traceback, not source code", failure.line)
    cell = _CELL_MAGIC.match(code.lstrip("\n"))
    if cell and cell.group(1) not in _PYTHON_CELL_MAGICS:
        return CodeCheck(Verdict.UNVERIFIABLE, f"IPython cell magic %%{cell.group(1)}: the cell is not Python")
    snippet = whole
    if _next_to(lines, failure.line, _MAGIC_OR_PROMPT.match):
        snippet = Snippet.from_lines(
            ((number, text) for number, text in enumerate(lines, 1) if not _MAGIC_OR_PROMPT.match(text)),
            "IPython magics and $ prompts dropped",
        )
        if not snippet.text.strip():
            return CodeCheck(Verdict.UNVERIFIABLE, "no Python left once IPython magics and $ prompts are dropped")
        failure = _parse(snippet)
    for retry in _indent_retries(snippet, failure):
        snippet, failure = retry, _parse(retry)
        if failure is None or failure.message != "unexpected indent":
            break
    if failure is not None and failure.message.startswith("expected an indented block"):
        stubbed = _fill_stubs(snippet)
        if stubbed is not None:
            filled, first_stub = stubbed
            refilled = _parse(filled)
            if refilled is None:
                return CodeCheck(
                    Verdict.UNVERIFIABLE,
                    f"a stub: the body after line {snippet.body_line(first_stub)} is only comments or a placeholder",
                    snippet.body_line(first_stub),
                )
            snippet, failure = filled, refilled
    if failure is None:
        return CodeCheck(Verdict.OK, f"checked with {snippet.note}" if snippet.note else "")
    return failure.judge(snippet)


def _next_to(lines: list[str], line: int, test: Callable[[str], object]) -> bool:
    """Whether the one-based `line` or the line before it passes `test` (an excuse must stand where the error is)."""
    return any(0 < number <= len(lines) and test(lines[number - 1]) for number in (line, line - 1))


def _opens_or_continues_example(line: str) -> bool:
    return _DOCTEST.match(line) is not None or _IPYTHON.match(line) is not None


def _session_at(lines: list[str], line: int) -> bool:
    """Whether the parser's error is the session's doing: on or right after a prompt line, or in the preamble before
    the first prompt (comments, `$ python`) of a block that holds nothing else there. A docstring's `>>>` examples
    elsewhere in code that fails for another reason are not a session."""
    if _next_to(lines, line, _opens_or_continues_example):
        return True
    first = next((number for number, text in enumerate(lines, 1) if _opens_example(text)), 0)
    return 0 < line <= first and not _code_before_first_prompt(lines)


def _in_traceback(lines: list[str], line: int) -> bool:
    """Whether the one-based `line` lies in a pasted traceback: at or after a `Traceback (most recent call last):` line
    with nothing but indented frame lines between (the final `ValueError: ...` line is the first unindented one)."""
    for number in range(min(line, len(lines)), 0, -1):
        text = lines[number - 1]
        if _TRACEBACK.match(text):
            return True
        if number != line and text.strip() and not text[:1].isspace():
            return False
    return False


_HEADER = re.compile(
    r"^([ \t]*)(?:async[ \t]+)?(?:def|class|if|elif|else|for|while|with|try|except|finally|match|case)\b.*:$"
)


def _fill_stubs(snippet: Snippet) -> tuple[Snippet, int] | None:
    """The snippet with `pass` written over the first comment or placeholder line of every header whose body holds
    nothing else (`def solve(x):` then `# your code here`), and the first such header's line; None when there is none.

    Lines keep their count and order, so the parser's line numbers still map back. A header at the very end with no
    body at all is not a stub: nothing stands in for the body, it is missing.
    """
    lines = snippet.text.split("\n")
    filled = list(lines)
    first = 0
    for index, line in enumerate(lines):
        code = blank_python_strings(line).rstrip()
        header = _HEADER.match(code)
        if header is None:
            continue
        indent = len(header.group(1).expandtabs())
        body: list[int] = []
        for following in range(index + 1, len(lines)):
            text = lines[following]
            stripped = text.strip()
            if not stripped:
                continue
            deeper = len(text.expandtabs()) - len(text.expandtabs().lstrip()) > indent
            if not (stripped.startswith("#") or _PLACEHOLDER.fullmatch(stripped)) or not deeper:
                if deeper:
                    body = []  # real code in the body: not a stub
                break
            body.append(following)
        if body:
            filled[body[0]] = " " * (indent + 4) + "pass"
            first = first or index + 1
    if not first:
        return None
    return Snippet("\n".join(filled), snippet.origin, snippet.note), first


def newer_grammar_feature(line: str, running: tuple[int, int] = GRAMMAR) -> GrammarFeature | None:
    """The grammar feature newer than `running` that `line` uses, if any (newest first)."""
    for feature in reversed(NEWER_GRAMMAR):
        if feature.since > running and feature.pattern.search(line):
            return feature
    return None


@dataclass(frozen=True)
class _Failure:
    message: str
    line: int = 0
    end_line: int = 0
    syntax: bool = True
    limit: bool = False
    column: int = -1
    """Zero-based column of the error on `line`, -1 when the parser gave none."""

    @property
    def incomplete(self) -> bool:
        return self.syntax and bool(_INCOMPLETE.search(self.message))

    def judge(self, snippet: Snippet) -> CodeCheck:
        """Malformed, unless the parser gave up, a newer grammar may accept the line, or a placeholder stands there."""
        line = snippet.body_line(self.line)
        note = f" ({snippet.note})" if snippet.note else ""
        if self.limit:
            return CodeCheck(Verdict.UNVERIFIABLE, f"the parser gave up, not a syntax error: {self.message}", line)
        if not self.syntax:
            return CodeCheck(Verdict.UNVERIFIABLE, self.message, line)
        last = min(max(self.line, self.end_line), self.line + 4)
        blamed = [(n, snippet.line_text(n)) for n in range(self.line, last + 1)]
        for number, text in blamed:
            feature = _newer_grammar_near(text, self.column if number == self.line else -1)
            if feature is not None:
                since = ".".join(map(str, feature.since))
                return CodeCheck(
                    Verdict.UNVERIFIABLE,
                    f"{self.message}; the line may use {feature.name} (Python {since}+), newer than this server's "
                    f"Python {platform.python_version()}",
                    line,
                )
        for number, text in blamed:
            placeholder = _placeholder_near(text, self.column if number == self.line else -1).strip()
            if placeholder == "..." and _BRACKET_ERROR.search(self.message):
                placeholder = ""  # an elision never mismatches or leaves open a bracket
            if placeholder:
                return CodeCheck(
                    Verdict.UNVERIFIABLE,
                    f"placeholder {placeholder!r} where code should be: {self.message}",
                    line,
                )
        other = other_language(snippet.line_text(self.line), "python")
        if other is not None:
            return CodeCheck(
                Verdict.UNVERIFIABLE,
                f"not python: {other.language} ({other.marker!r}) on the line the parser rejected: {self.message}",
                line,
            )
        return CodeCheck(Verdict.MALFORMED, self.message + note, line)


def _newer_grammar_near(line: str, column: int) -> GrammarFeature | None:
    """The newer-grammar feature the line uses outside its strings, on or next to the error column."""
    masked = blank_python_strings(line)
    for feature in reversed(NEWER_GRAMMAR):
        if feature.since <= GRAMMAR:
            continue
        for match in feature.pattern.finditer(masked):
            end = len(line) if feature.literal else match.end()  # an error anywhere in a new literal is the literal's
            if near(match.start(), end, column):
                return feature
    return None


def _placeholder_near(line: str, column: int) -> str:
    """The placeholder outside strings and comments on or next to the error column ("" if none)."""
    masked = blank_python_strings(line)
    for match in _PLACEHOLDER.finditer(masked):
        if near(match.start(), match.end(), column):
            return line[match.start() : match.end()]
    return ""


def _parse(snippet: Snippet) -> _Failure | None:
    """None if the snippet parses, else why not. Warnings are silenced: an invalid escape is not a syntax error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(snippet.text, filename="<block>", mode="exec")
    except SyntaxError as error:
        message = error.msg or "invalid syntax"
        column = error.offset - 1 if error.offset and error.offset > 0 else -1
        return _Failure(
            message, error.lineno or 0, error.end_lineno or 0, limit=bool(_LIMITS.search(message)), column=column
        )
    except (MemoryError, RecursionError) as error:
        return _Failure(f"{type(error).__name__}: {error}", syntax=False, limit=True)
    except UnicodeError as error:
        return _Failure(f"the code is not valid Unicode: {error}", syntax=False)
    except ValueError as error:  # Python 3.11 raises ValueError for NUL bytes and for huge integer literals
        message = str(error)
        return _Failure(message, limit=bool(_LIMITS.search(message)))
    return None


def _is_session(code: str) -> bool:
    return any(_opens_example(line) for line in code.split("\n"))


def _check_session(code: str) -> CodeCheck:
    """Parse each example of a doctest or IPython session on its own, as doctest compiles them.

    An example that opens with an IPython line magic or shell escape (`In [1]: %timeit f()`, `>>> !ls`) loses that
    line, as a cell does outside a session; one that opens with a cell magic for another language is skipped.

    Prompts after code that fails to parse (`def f():` then a docstring's `>>>` examples) may be doctests inside a
    string rather than a session: the examples parsing then proves nothing about the code around them, so that
    reading never makes the block ok.
    """
    lines = code.split("\n")
    examples = 0
    for pairs, next_line in _examples(lines):
        example = _without_magics(pairs)
        if example is None:
            continue
        examples += 1
        failure = _parse(example)
        if failure is None:
            continue
        if failure.incomplete and next_line is not None:
            number, text = next_line
            return CodeCheck(
                Verdict.UNVERIFIABLE,
                f"session example continues on an unprompted line ({text.strip()[:40]!r}): {failure.message}",
                number,
            )
        return failure.judge(example)
    if _code_before_first_prompt(lines):
        return CodeCheck(
            Verdict.UNVERIFIABLE,
            "session prompts after code that does not parse (doctest examples inside a string?); not checked",
        )
    if not examples:
        return CodeCheck(Verdict.UNVERIFIABLE, "no Python left once IPython magics are dropped from the session")
    return CodeCheck(Verdict.OK, f"checked with {examples} session example(s), prompts removed")


def _opens_example(line: str) -> bool:
    prompt = _DOCTEST.match(line) or _IPYTHON.match(line)
    return prompt is not None and (line.lstrip().startswith(">>>") or line.lstrip().startswith("In ["))


def _code_before_first_prompt(lines: list[str]) -> bool:
    """Whether a line before the session's first prompt holds code: not blank, a comment or a `$` prompt (`$ python`
    launching the session)."""
    for line in lines:
        if _opens_example(line):
            return False
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not _MAGIC_OR_PROMPT.match(line):
            return True
    return False


def _without_magics(pairs: list[tuple[int, str]]) -> Snippet | None:
    """An example as a snippet, its opening magic line dropped; None when nothing of it is Python."""
    first = pairs[0][1]
    cell = _CELL_MAGIC.match(first)
    if cell and cell.group(1) not in _PYTHON_CELL_MAGICS:
        return None
    if cell or _MAGIC_OR_PROMPT.match(first):
        pairs = pairs[1:]
    if not any(text.strip() for _, text in pairs):
        return None
    return Snippet.from_lines(pairs, "session prompts removed")


def _examples(lines: list[str]) -> Iterator[tuple[list[tuple[int, str]], tuple[int, str] | None]]:
    """Each example's (body line, code) pairs, and the first non-blank output line after it (None when the next line
    is a prompt)."""
    current: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        prompt = _DOCTEST.match(line) or _IPYTHON.match(line)
        opens = _opens_example(line)
        if prompt is not None and (opens or current):
            if opens and current:
                yield current, None
                current = []
            current.append((number, line[prompt.end() :]))
            continue
        if current:
            yield current, (number, line) if line.strip() else None
            current = []
    if current:
        yield current, None


def _indent_retries(snippet: Snippet, failure: _Failure | None) -> Iterator[Snippet]:
    """A fragment cut out of a function body: retried dedented, then nested in `if 1:` headers.

    One header per indentation level the fragment later returns to (and column 0), so a fragment that starts deep and
    dedents part-way (`        return x` then `    def other(self):`) still has a block to close back into.
    """
    if failure is None or failure.message != "unexpected indent":
        return
    origin = snippet.origin or tuple(range(1, snippet.line_count + 1))
    note = f"{snippet.note}, " if snippet.note else ""
    dedented = textwrap.dedent(snippet.text)
    if dedented != snippet.text:
        yield Snippet(dedented, origin, note + "fragment dedented")
    lines = snippet.text.split("\n")
    first = next((line for line in lines if line.strip()), "")
    depth = len(first) - len(first.lstrip())
    if depth == 0:
        return
    levels = {""}
    for line in lines:
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) < depth:
            levels.add(line[: len(line) - len(stripped)])
    headers = "".join(f"{level}if 1:\n" for level in sorted(levels, key=len))
    yield Snippet(headers + snippet.text, (origin[0],) * len(levels) + origin, note + "fragment nested in if 1:")
