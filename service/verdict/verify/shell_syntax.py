"""Shell blocks: what to hand `bash -n`, and what its answer means. Running bash is the verifier's job (through the
runner); this module is pure, so every reading of bash's output is testable without a process.

Why `bash -n` and these flags (reference §3.3, §6.5): `-n` reads and parses without executing anything; `--norc
--noprofile` and an empty environment keep startup files and BASH_ENV out; `-O extglob` must be on before parsing or
`+([0-9])` (pyenv's python-build) is a syntax error. The script is fed on stdin but named `/dev/stdin`, because bash
reading plain stdin reports errors without a line number and `/dev/stdin: line 3:` is what lets a detail point at the
response's line.

Reading the answer, in order:
- bash killed by a signal (it segfaults on ~2,000 nested `$(`, a 4 KB input) or out of time: unverifiable, the
  checker failed, not the code;
- a "here-document ... delimited by end-of-file" warning: truncated, though bash exits 0 (the block stops inside the
  here-document);
- a last line ending in a line-continuation backslash: truncated, though bash exits 0;
- exit 1 or 2: malformed with bash's own message, unless the line bash blamed holds, outside quotes, a `<placeholder>`
  (`npm <command>` reads as redirections) or an unmistakable marker of another language (a Python `def f():`,
  PowerShell's `Get-ChildItem`): unverifiable. An error bash gives no line for excuses nothing;
- any other exit (126, 127: bash could not read the script): unverifiable;
- exit 0: ok.

A block written as a console transcript (`$ ` prompts) has its commands checked and its output lines dropped.
"""

from __future__ import annotations

import re

from verdict.verify.excuses import blank_quoted, other_language
from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.snippet import Snippet

__all__ = ["BASH_ARGV", "interpret_bash", "shell_script"]

BASH_ARGV = ("bash", "--norc", "--noprofile", "-O", "extglob", "-n", "/dev/stdin")

_PROMPT = re.compile(r"^\s*\$ ")
_CONTINUATION_PROMPT = re.compile(r"^\s*> ")
_LOCATED = re.compile(r"^[^\n]*?: line (\d+): (.*)$")
_HEREDOC = re.compile(r"warning: here-document at line (\d+) delimited by end-of-file(.*)$")
_PLACEHOLDER = re.compile(r"(?<![<\w])<[A-Za-z][\w.:/@-]*(?: [\w.:/@-]+)*>")
_CODE = re.compile(r"""(?:'[^']*+'|"(?:[^"\\]|\\.)*+"|\\.|(?<=[^ \t;&|()<>])#|[^'"\\#])*+""")
"""A line's code before any comment, as bash reads it: quoted strings, escapes, and `#` only inside a word (`$#`,
`${#x}`, `a#b`). The match stops at a comment, an unterminated quote or a final lone backslash, in C, never
backtracking."""
_HEREDOC_TOKEN = re.compile(
    r"""(?<!<)<<(-?)[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([^\s;&|()<>'"]+))"""
    r"""|'[^']*'?|"(?:[^"\\]|\\.)*"?|\\.?|[^'"\\<]+|<"""
)
"""A here-document operator with its delimiter, or what may hide one: a quoted string, an escape, other text."""
_WORD_BREAK = frozenset(" \t;&|()<>")
_BODY_OPENER = re.compile(r"(?:^|[\s;)])(?:\{|then|do|else)$")
"""A line that opens a body: a function or group `{`, `then`, `do`, `else` at its end (comments aside)."""
_STUB_HINT = re.compile(r"^[ \t]*+#[^\n]*+\n(?:[ \t]*+\n)*+[ \t]*+(?:\}|(?:fi|done|esac|else|elif)\b)", re.MULTILINE)
"""A comment line followed (blank lines aside) by a body's closing word: without one there is no stub to fill, and the
line-by-line pass is skipped (it is Python; this search is C)."""
_BODY_CLOSER = re.compile(r"(?:\}|fi|done|esac|else|elif)(?:[\s;|&)]|$)")


def shell_script(code: str) -> Snippet:
    """The script bash should parse: the block as written, or the commands of a `$ `-prompted transcript, with every
    stub filled (`fill_stubs`)."""
    return fill_stubs(_commands(code))


def fill_stubs(script: Snippet) -> Snippet:
    """The script with `:` written over the first line of every body that holds only comments (`f() {` then
    `# TODO` then `}`; `then` / `do` / `else` bodies alike), the header lines recorded in `stubs`.

    bash rejects an empty body, so such a stub would hide every error after it; filled, one `bash -n` run says whether
    the stub is the script's only failure (exit 0: unverifiable, "a stub") or not (the other error is judged). Lines
    keep their count, so bash's line numbers still map back.
    """
    if _STUB_HINT.search(script.text) is None:
        return script
    lines = script.text.split("\n")
    stubs = []
    header = -1
    comments: list[int] = []
    heredocs: list[tuple[str, bool]] = []
    for index, line in enumerate(lines):
        if heredocs:  # a here-document's body is data: its `{`, `#` and `}` lines are no stub
            delimiter, strip_tabs = heredocs[0]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                heredocs.pop(0)
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if header >= 0 and stripped.startswith("#"):
            comments.append(index)
            continue
        if header >= 0 and comments and _BODY_CLOSER.match(stripped):
            lines[comments[0]] = " " * (len(line) - len(line.lstrip()) + 2) + ":"
            stubs.append(header + 1)
        maybe_header = "{" in line or "then" in line or "do" in line or "else" in line
        header = index if maybe_header and _BODY_OPENER.search(_without_comment(line).rstrip()) else -1
        comments = []
        heredocs = _heredoc_delimiters(line) if "<<" in line else []
    if not stubs:
        return script
    return Snippet("\n".join(lines), script.origin, script.note, tuple(stubs))


def _commands(code: str) -> Snippet:
    lines = code.split("\n")
    if not any(_PROMPT.match(line) for line in lines):
        return Snippet(code)
    if lines[-1] == "":
        lines.pop()  # what follows the last line feed is no line
    kept: list[tuple[int, str]] = []
    continuing = False
    heredocs: list[tuple[str, bool]] = []  # delimiters still awaited, and whether `<<-` strips leading tabs
    for number, line in enumerate(lines, 1):
        if heredocs:  # a here-document's body is input, not output, with or without `> ` prompts
            follow = _CONTINUATION_PROMPT.match(line)
            text = line[follow.end() :] if follow is not None else line
            kept.append((number, text))
            delimiter, strip_tabs = heredocs[0]
            if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                heredocs.pop(0)
            continue
        prompt = _PROMPT.match(line)
        if prompt is not None:
            text = line[prompt.end() :]
        elif continuing and (follow := _CONTINUATION_PROMPT.match(line)) is not None:
            text = line[follow.end() :]
        elif continuing and kept and _continues(kept[-1][1]):
            text = line
        else:
            continuing = False
            continue
        kept.append((number, text))
        continuing = True
        heredocs = _heredoc_delimiters(text)
    return Snippet.from_lines(kept, "$ prompts removed, output lines dropped")


def interpret_bash(
    script: Snippet,
    returncode: int | None,
    stderr: str,
    *,
    timed_out: bool = False,
    signal_name: str | None = None,
) -> CodeCheck:
    """The verdict on a block from what `bash -n` did with `script`. Lines in the result are block-body lines."""
    if timed_out:
        return CodeCheck(Verdict.UNVERIFIABLE, "bash -n did not finish within its time limit")
    if signal_name is not None:
        return CodeCheck(Verdict.UNVERIFIABLE, f"bash crashed ({signal_name}) while parsing; the block was not checked")
    messages = [line for line in stderr.splitlines() if line.strip()]
    for message in messages:
        heredoc = _HEREDOC.search(message)
        if heredoc is not None:
            line = script.body_line(int(heredoc.group(1)))
            return CodeCheck(Verdict.TRUNCATED, f"here-document delimited by end-of-file{heredoc.group(2)}", line)
    continued = _last_line_continues(script)
    if continued:
        return CodeCheck(Verdict.TRUNCATED, "the last line ends in a line continuation (\\)", continued)
    if returncode == 0 and script.stubs:
        line = script.body_line(script.stubs[0])
        return CodeCheck(Verdict.UNVERIFIABLE, f"a stub: the body after line {line} is only comments", line)
    if returncode == 0:
        return CodeCheck(Verdict.OK, f"checked with {script.note}" if script.note else "")
    first = messages[0] if messages else f"bash -n exited {returncode}"
    located = _LOCATED.match(first)
    line, message = (int(located.group(1)), located.group(2)) if located else (0, first.removeprefix("bash: "))
    if returncode not in (1, 2):
        return CodeCheck(Verdict.UNVERIFIABLE, f"bash -n could not check the block (exit {returncode}): {message}")
    blamed = script.line_text(line) if line else ""
    placeholder = _PLACEHOLDER.search(blank_quoted(blamed))
    if placeholder is not None:
        return CodeCheck(
            Verdict.UNVERIFIABLE,
            f"placeholder {blamed[placeholder.start() : placeholder.end()]!r} where a word should be: {message}",
            script.body_line(line),
        )
    other = other_language(blamed, "shell")
    if other is not None:
        return CodeCheck(
            Verdict.UNVERIFIABLE,
            f"not shell: {other.language} ({other.marker!r}) on the line bash rejected: {message}",
            script.body_line(line),
        )
    note = f" ({script.note})" if script.note else ""
    return CodeCheck(Verdict.MALFORMED, message + note, script.body_line(line))


def _continues(line: str) -> bool:
    """Whether a line ends in a line continuation: an odd run of backslashes (`\\\\` is an escaped backslash) that is
    not part of a comment (`echo hi  # C:\\temp\\` ends in a comment, which nothing continues)."""
    code = _without_comment(line)
    return (len(code) - len(code.rstrip("\\"))) % 2 == 1


def _without_comment(line: str) -> str:
    """The line up to its comment, if it has one: a `#` that starts a word outside quotes (not `$#` or `${#x}`)."""
    match = _CODE.match(line)
    end = match.end() if match is not None else 0
    return line[:end] if line.startswith("#", end) else line


def _heredoc_delimiters(line: str) -> list[tuple[str, bool]]:
    """The here-documents a command line opens outside quotes and comments (`<<EOF`, `<<-'END'`; not `<<<`), as
    (delimiter, whether leading tabs are stripped)."""
    code = _without_comment(line)
    if "<<" not in code:
        return []
    heredocs = []
    for token in _HEREDOC_TOKEN.finditer(code):
        dash, single, double, bare = token.group(1, 2, 3, 4)
        if dash is None or code.count("((", 0, token.start()) > code.count("))", 0, token.start()):
            continue  # not an operator, or a left shift inside `$(( ))` / `(( ))`
        heredocs.append((single if single is not None else double if double is not None else bare, bool(dash)))
    return heredocs


def _last_line_continues(script: Snippet) -> int:
    """The body line of a last line that ends in a line continuation (0 if none); comments never continue."""
    lines = script.text.split("\n")
    index = len(lines) - 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    if index < 0 or not _continues(lines[index]):
        return 0
    return script.body_line(index + 1)
