"""Structural checks through tree-sitter grammars: the C family, Ruby, PHP, CSS, Kotlin, Swift, Scala, Elixir, Lua...

A tree-sitter grammar never refuses input: it recovers, and marks what it could not read with ERROR and MISSING
nodes. Intact code from real projects still produces such nodes now and then (a grammar behind the language, a macro
the C grammar cannot see through, a dialect), so "the tree has an error" alone would be a false alarm. What a cut or a
lost bracket leaves is different and measurable, and only that is called malformed:

- **unbalanced brackets**: the `(` `[` `{` tokens the lexer saw (strings, comments, character literals and regular
  expressions are tokens of their own, so their brackets do not count) do not pair up with `)` `]` `}`;
- **an error at the end**: an innermost ERROR node reaches the end of the code, which is where a parser stands when
  the text stopped mid-construct (an expression cut in half, Ruby's `def` without its `end`).

A snippet is usually a fragment (a method without its class, statements without a function), so every grammar has
fragment forms: the code as written, then wrapped in a class body, a function body, a rule block... The block is ok as
soon as one form parses without error. When none does, the code as written decides (a wrapper adds only balanced
brackets, and its own closing `}` or `end` could stand in for exactly the closer a cut removed): malformed when it
shows one of the two kinds above, under every grammar of the language; otherwise unverifiable, with the line the
grammar blamed. Ruby and C/C++ have measured exceptions, documented on `Grammar`'s fields.

Everything here is pure and C-speed (tree-sitter parses several MB/s per core); the grammars are loaded lazily, once
per process, so importing this module costs nothing until a block of the language arrives.
"""

from __future__ import annotations

import functools
import importlib
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from verdict.verify.css_declarations import colonless_declaration
from verdict.verify.literals import LEXED, unterminated
from verdict.verify.model import CodeCheck, Verdict

__all__ = ["GRAMMARS", "Form", "Grammar", "branches", "check_tree"]


@dataclass(frozen=True)
class Form:
    """One way a fragment can stand in the language: the code between `prefix` and `suffix`."""

    name: str
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class Grammar:
    """A tree-sitter grammar from its PyPI wheel: the module, the function that returns the language, the forms."""

    module: str
    function: str = "language"
    forms: tuple[Form, ...] = (Form("program"),)
    brackets: bool = True
    """Whether unbalanced brackets are a reliable sign (false for grammars whose brackets are not tokens)."""
    missing_closers: frozenset[str] = frozenset()
    """MISSING tokens that say a construct was left open wherever they stand (Ruby's `end`, which no bracket count
    sees, and the `]` of a `%w[` literal, whose opener is one token with its letters). A MISSING `}` in C or C++ is
    often the grammar losing its way in a macro, so elsewhere the bracket count decides; a MISSING `;` is a
    fragment's shape (`f(x)` as an expression), never a sign."""
    whole_file: re.Pattern[bytes] | None = None
    """Code this matches is a whole file, so only the first form is tried. For C and C++: preprocessor lines. Macro-
    heavy headers send the grammar into error recovery (67 % of the corpus's libstdc++ headers fail every form), each
    form costs a full recovering parse, and no wrapper rescued any of the corpus's 335 C and C++ samples."""
    only_with: str = ""
    """Try this grammar only on code containing this text (PHP's HTML-template grammar: only with `<?`)."""
    any_error_at_end: bool = False
    """Whether any ERROR reaching the end counts, or only an innermost one. When recovery fails, one ERROR can wrap a
    whole intact C++ or Rust file (macros); Ruby's grammar wraps the open `def` of a cut that way instead."""
    line_strings: str = ""
    """The quotes whose strings end at their line (JavaScript's `'` and `"`, C's `"`). A quote the grammar could not
    pair, left alone in an ERROR with no partner on the rest of its line, is an unterminated string: bracket counts
    miss it (the string swallows whatever it reaches) and the grammar often recovers with balanced brackets."""
    multiline_strings: str = ""
    """Quotes whose strings may span lines (Rust's `"`): unterminated when no partner follows anywhere."""
    preprocessor: bool = False
    """C and C++: `#if` ... `#else` ... `#endif` branches hold alternatives (two headers of one function, each with
    its `{`), so brackets are counted, and the code is parsed once more, with only the first branch of each."""
    declarations: bool = False
    """CSS: an ERROR that is one `property value;` line inside a block is a declaration without its `:`."""

    def parser(self) -> tree_sitter.Parser:
        return _parser(self.module, self.function)


@functools.cache
def _parser(module: str, function: str) -> tree_sitter.Parser:
    language = getattr(importlib.import_module(module), function)()
    with warnings.catch_warnings():
        # tree-sitter-solidity's wheel still hands over the language as an int, which tree-sitter 0.26 accepts with a
        # DeprecationWarning (pyproject.toml keeps tree-sitter below the release that may drop it).
        warnings.simplefilter("ignore", DeprecationWarning)
        return tree_sitter.Parser(tree_sitter.Language(language))


_PROGRAM = Form("program")
_PREPROCESSED = re.compile(rb"(?m)^[ \t]*#[ \t]*(?:include|define|if|ifdef|ifndef|pragma)\b")

GRAMMARS: dict[str, tuple[Grammar, ...]] = {
    "javascript": (
        Grammar(
            "tree_sitter_javascript",
            forms=(_PROGRAM, Form("class body", "class __V {\n", "\n}"), Form("object literal", "({\n", "\n})")),
            line_strings="\"'",
        ),
    ),
    "typescript": (
        Grammar(
            "tree_sitter_typescript",
            "language_typescript",
            forms=(_PROGRAM, Form("class body", "class __V {\n", "\n}"), Form("object literal", "({\n", "\n})")),
            line_strings="\"'",
        ),
        Grammar(
            "tree_sitter_typescript",
            "language_tsx",
            forms=(_PROGRAM, Form("class body", "class __V {\n", "\n}")),
            line_strings="\"'",
        ),
    ),
    "java": (
        Grammar(
            "tree_sitter_java",
            forms=(
                _PROGRAM,
                Form("class body", "class __V {\n", "\n}"),
                Form("method body", "class __V { void __v() {\n", "\n}}"),
            ),
            line_strings='"',
        ),
    ),
    "c": (
        Grammar(
            "tree_sitter_c",
            forms=(_PROGRAM, Form("function body", "void __v(void) {\n", "\n}")),
            whole_file=_PREPROCESSED,
            line_strings='"',
            preprocessor=True,
        ),
    ),
    "cpp": (
        Grammar(
            "tree_sitter_cpp",
            forms=(
                _PROGRAM,
                Form("class body", "struct __V {\n", "\n};"),
                Form("function body", "void __v() {\n", "\n}"),
            ),
            whole_file=_PREPROCESSED,
            line_strings='"',
            preprocessor=True,
        ),
    ),
    "csharp": (
        Grammar(
            "tree_sitter_c_sharp",
            forms=(
                _PROGRAM,
                Form("class body", "class __V {\n", "\n}"),
                Form("method body", "class __V { void __v() {\n", "\n}}"),
            ),
            line_strings='"',
        ),
    ),
    "go": (
        Grammar(
            "tree_sitter_go",
            # Go ends a top-level declaration with a newline; the grammar wants it after the wrapper's `}` too.
            forms=(
                _PROGRAM,
                Form("function body", "func __v() {\n", "\n}\n"),
                Form("struct body", "type __V struct {\n", "\n}\n"),
            ),
            line_strings='"',
        ),
    ),
    "rust": (
        Grammar(
            "tree_sitter_rust",
            forms=(_PROGRAM, Form("function body", "fn __v() {\n", "\n}"), Form("impl body", "impl __V {\n", "\n}")),
            multiline_strings='"',
        ),
    ),
    "ruby": (
        Grammar(
            "tree_sitter_ruby",
            forms=(_PROGRAM, Form("class body", "class V__\n", "\nend")),
            missing_closers=frozenset({"end", ")", "]", "}"}),
            any_error_at_end=True,
        ),
    ),
    "php": (
        # PHP code as answers show it, with or without `<?php`; the full grammar reads anything outside `<?php ?>`
        # as HTML text (so it would accept any fragment without the tag) and is kept for templates that mix both.
        Grammar(
            "tree_sitter_php",
            "language_php_only",
            forms=(_PROGRAM, Form("class body", "class __V {\n", "\n}")),
        ),
        Grammar("tree_sitter_php", "language_php", forms=(Form("template"),), only_with="<?"),
    ),
    "css": (
        Grammar(
            "tree_sitter_css",
            forms=(_PROGRAM, Form("declarations", "__v {\n", "\n}")),
            line_strings="\"'",
            declarations=True,
        ),
    ),
    "kotlin": (
        Grammar(
            "tree_sitter_kotlin",
            forms=(
                _PROGRAM,
                Form("class body", "class __V {\n", "\n}"),
                Form("function body", "fun __v() {\n", "\n}"),
            ),
        ),
    ),
    "swift": (
        Grammar(
            "tree_sitter_swift",
            forms=(
                _PROGRAM,
                Form("class body", "class __V {\n", "\n}"),
                Form("function body", "func __v() {\n", "\n}"),
            ),
        ),
    ),
    "scala": (
        Grammar(
            "tree_sitter_scala",
            forms=(
                _PROGRAM,
                Form("object body", "object __V {\n", "\n}"),
                Form("function body", "def __v() = {\n", "\n}"),
            ),
        ),
    ),
    "elixir": (Grammar("tree_sitter_elixir", missing_closers=frozenset({"end"})),),
    "lua": (
        Grammar(
            "tree_sitter_lua",
            forms=(_PROGRAM, Form("function body", "function __v()\n", "\nend")),
            missing_closers=frozenset({"end"}),
            any_error_at_end=True,
        ),
    ),
    "haskell": (Grammar("tree_sitter_haskell"),),
    "solidity": (
        Grammar(
            "tree_sitter_solidity",
            forms=(
                _PROGRAM,
                Form("contract body", "contract __V {\n", "\n}"),
                Form("function body", "contract __V { function __v() public {\n", "\n}}"),
            ),
            line_strings="\"'",
        ),
    ),
    "glsl": (
        Grammar(
            "tree_sitter_glsl",
            forms=(_PROGRAM, Form("function body", "void __v() {\n", "\n}")),
            whole_file=_PREPROCESSED,
            preprocessor=True,
        ),
    ),
    "ocaml": (
        Grammar(
            "tree_sitter_ocaml", "language_ocaml", missing_closers=frozenset({"end", "done"}), any_error_at_end=True
        ),
        Grammar(
            "tree_sitter_ocaml",
            "language_ocaml_interface",
            missing_closers=frozenset({"end", "done"}),
            any_error_at_end=True,
        ),
    ),
}
"""Every grammar of every tree-sitter language, in the order their forms are tried."""

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}


@dataclass(frozen=True)
class _Failure:
    """How the code failed: the first error's line (one-based) and the malformation, if any."""

    first_error_line: int
    malformation: str
    line: int


def check_tree(language: str, code: str) -> CodeCheck:
    """The verdict on `code` in a tree-sitter `language` (a key of GRAMMARS)."""
    if "\x00" in code:
        return CodeCheck(Verdict.MALFORMED, "a NUL byte in source code", 0)
    data = code.encode("utf-8", "surrogatepass")
    grammars = GRAMMARS[language]
    failures: list[_Failure] = []
    for grammar in grammars:
        if grammar.only_with and grammar.only_with not in code:
            continue
        parser = grammar.parser()
        forms = grammar.forms[:1] if grammar.whole_file and grammar.whole_file.search(data) else grammar.forms
        tree = None
        for form in forms:
            parsed = parser.parse(form.prefix.encode() + data + form.suffix.encode())
            if not parsed.root_node.has_error:
                return CodeCheck(Verdict.OK)
            tree = tree or parsed
        assert tree is not None
        # No form parses. The code as written (the first form, with nothing added) decides: a wrapper can only add
        # balanced brackets, and its closing `}` or `end` could stand in for exactly the closer a cut removed.
        failure = _failure(grammar, tree.root_node, data)
        if grammar.preprocessor and _BRANCH.search(data):
            # `#if` ... `#else` holds alternatives: each configuration (every first branch, every last branch) is
            # read as a compiler would read it. Both parse: ok. The code as written is malformed only when one
            # configuration is too: two alternative headers, each opening its `{`, are not an unclosed brace.
            configurations = [branches(data, keep_last) for keep_last in (False, True)]
            trees = [parser.parse(configuration) for configuration in configurations]
            if not any(tree.root_node.has_error for tree in trees):
                return CodeCheck(Verdict.OK)
            readings = [_failure(grammar, t.root_node, c) for t, c in zip(trees, configurations, strict=True)]
            if failure.malformation and not any(reading.malformation for reading in readings):
                failure = _Failure(failure.first_error_line, "", 0)
        failures.append(failure)
    if all(failure.malformation for failure in failures):
        return CodeCheck(Verdict.MALFORMED, failures[0].malformation, failures[0].line)
    first = min(failure.first_error_line for failure in failures)
    string = unterminated(language, code)
    # The lexer read every intact sample of the corpus, and thousands of installed C, C++, Java and JavaScript files,
    # without one unterminated string. In JavaScript and TypeScript, JSX text is prose (`<p>Don't</p>`), so there a
    # string that ran to the end of its line counts only when the grammar stumbled there or later, not above it.
    if string is not None and (LEXED[language] != "javascript" or not string.at_line_end or string.line <= first):
        how = "runs to the end of its line" if string.at_line_end else "runs to the end of the code"
        return CodeCheck(
            Verdict.MALFORMED,
            f"an unterminated string literal (its {string.opener} is never closed: it {how})",
            string.line,
        )
    if any(grammar.declarations for grammar in grammars) and (line := colonless_declaration(code)):
        return CodeCheck(Verdict.MALFORMED, _COLONLESS, line)
    if any(grammar.preprocessor and _reads_without_macros(grammar, data) for grammar in grammars):
        return CodeCheck(Verdict.OK)
    return CodeCheck(
        Verdict.UNVERIFIABLE,
        f"the {language} grammar cannot read this line, but nothing looks cut or unbalanced: "
        "possibly syntax the grammar does not know",
        first,
    )


def _failure(grammar: Grammar, root: tree_sitter.Node, code: bytes) -> _Failure:
    first_error = 0
    last_error_end = -1
    missing = ""
    missing_line = 0
    tokens: list[tuple[str, int]] = []
    for node in _leaves_and_errors(root):
        if node.is_error or node.is_missing:
            if not first_error:
                first_error = node.start_point[0] + 1
            if node.is_missing and node.type in grammar.missing_closers and not missing:
                missing, missing_line = node.type, node.start_point[0] + 1
            # Only an innermost ERROR says where reading stopped: when recovery fails, one ERROR wraps the whole file.
            if node.is_error and (grammar.any_error_at_end or not any(child.has_error for child in node.children)):
                last_error_end = max(last_error_end, node.end_byte)
        empty = node.end_byte == node.start_byte  # a closer the grammar supplied at the end, like a MISSING one
        if node.child_count == 0 and not node.is_missing and not empty and (node.is_error or not node.is_named):
            tokens.extend((char, node.start_point[0] + 1) for char in _brackets(node))
    malformation, line = "", 0
    if grammar.line_strings or grammar.multiline_strings or grammar.declarations:
        malformation, line = _error_sign(grammar, root, code)
    if not malformation and grammar.brackets:
        malformation, line = _unbalanced(tokens)
    if not malformation and missing:
        malformation, line = f"a closing '{missing}' is missing", missing_line
    if not malformation and last_error_end >= len(code.rstrip()):
        malformation = "the code stops in the middle of a construct (an error runs to its last line)"
        line = code.count(b"\n") + 1 - (1 if code.endswith(b"\n") else 0)
    return _Failure(first_error or 1, malformation, line)


_MACRO = re.compile(rb"\b_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b(?:[ \t]*\([^()\n\"']*\))?")
"""A macro's shape: an all-capitals name with an underscore (`_GLIBCXX_NOEXCEPT`, `LLVM_ATTRIBUTE_UNUSED`), with its
arguments when they close on the same line (`_GLIBCXX_VISIBILITY(default)`), none of them quoted."""


def _reads_without_macros(grammar: Grammar, code: bytes) -> bool:
    """Whether the grammar reads `code` once macro-shaped names are blanked (each byte a space, so lines hold).

    A macro the grammar cannot expand (`namespace std _GLIBCXX_VISIBILITY(default) {`, `f() _GLIBCXX_NOEXCEPT;`) made
    66 % of the corpus's intact C++ unverifiable. Asked only after the code as written showed no malformation, so it
    can only turn an unverifiable block into an ok one; blanking removes no bracket a cut or a drop could have left
    open (an invocation is blanked only with both its parentheses on one line)."""
    blanked = b"\n".join(
        line if line.lstrip().startswith(b"#") else _MACRO.sub(lambda match: b" " * len(match.group(0)), line)
        for line in code.split(b"\n")
    )  # a directive's names are the preprocessor's own (`#ifndef _GLIBCXX_ARRAY`): kept
    if blanked == code:
        return False
    parser = grammar.parser()
    if not parser.parse(blanked).root_node.has_error:
        return True
    if not _BRANCH.search(blanked):
        return False
    return any(not parser.parse(branches(blanked, keep_last)).root_node.has_error for keep_last in (False, True))


_BRANCH = re.compile(rb"(?m)^[ \t]*#[ \t]*(?:else|elif|elifdef|elifndef)\b")
_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|else|elif|elifdef|elifndef|endif)\b")
_DECLARATION = re.compile(rb"-{0,2}[A-Za-z][\w-]*[ \t]+[^\s:;{}][^:;{}\n]*;")
"""`property value;` on one line: what a declaration is once its colon is lost."""


def branches(code: bytes, keep_last: bool) -> bytes:
    """`code` as one configuration compiles it: the first (or the last) branch of every `#if` group kept, every
    other branch and the conditional directives blanked, line for line (line numbers still hold). Linear.

    A group's branches are kept or dropped whole, nested groups inside a dropped branch with them."""
    lines = code.split(b"\n")
    groups: list[list[int]] = []  # per open group: the line numbers where its branches start
    spans: list[tuple[int, int]] = []  # (start, end) line ranges to blank
    for number, line in enumerate(lines):
        match = _DIRECTIVE.match(line)
        directive = match.group(1) if match else b""
        if directive.startswith(b"if"):
            groups.append([number])
        elif directive.startswith(b"el") and groups:
            groups[-1].append(number)
        elif directive == b"endif" and groups:
            starts = [*groups.pop(), number]
            kept = len(starts) - 2 if keep_last else 0
            spans.extend((begin, starts[index + 1]) for index, begin in enumerate(starts[:-1]) if index != kept)
        if directive:
            lines[number] = b""
    depth = 0
    marks = [0] * (len(lines) + 1)
    for begin, end in spans:
        marks[begin] += 1
        marks[end] -= 1
    for number in range(len(lines)):
        depth += marks[number]
        if depth > 0:
            lines[number] = b""
    return b"\n".join(lines)


def _error_sign(grammar: Grammar, root: tree_sitter.Node, code: bytes) -> tuple[str, int]:
    """An unterminated string or a declaration without its colon inside an ERROR node (the first one), or ("", 0).

    Looked for only inside ERROR nodes, so intact code the grammar reads is never asked about, and only at the quote
    or declaration the grammar could not place."""
    for node in _leaves_and_errors(root):
        parent = node.parent
        if parent is None or node.is_missing:
            continue
        if (
            node.type in grammar.line_strings
            and len(node.type) == 1
            and not parent.is_error
            and parent.has_error
            and parent.start_point[0] != parent.end_point[0]
            and node.start_byte == parent.start_byte
            and parent.children[-1].type == node.type
            and b"\\\n" not in (parent.text or b"")
        ):
            # The grammar paired this quote with one on a later line and put an ERROR between: the string ran
            # to the end of its line unclosed (a line continuation `\` would have been legal).
            return f"an unterminated string literal (its {node.type} is never closed)", node.start_point[0] + 1
        if not parent.is_error:
            continue
        if node.type in grammar.line_strings or node.type in grammar.multiline_strings:
            before = node.prev_sibling
            if len(node.type) != 1 or (before is not None and _in_string(before, node.type)):
                continue  # the closing quote of a string the grammar read in pieces
            quote = node.type.encode()
            line_start = code.rfind(b"\n", 0, node.start_byte) + 1
            if _quotes(code[line_start : node.start_byte], quote) % 2:
                continue  # the same: an odd number of quotes before it on its line opened the string it closes
            end = len(code) if node.type in grammar.multiline_strings else code.find(b"\n", node.end_byte)
            if not _quotes(code[node.end_byte : len(code) if end < 0 else end], quote):
                return f"an unterminated string literal (its {node.type} is never closed)", node.start_point[0] + 1
    if grammar.declarations:
        for node in _leaves_and_errors(root):
            if not node.is_error:
                continue
            parent = node.parent
            text = node.text or b""
            first_line = text.split(b"\n", 1)[0].rstrip()
            if parent is not None and parent.type == "block" and _DECLARATION.fullmatch(first_line):
                return _COLONLESS, (node.start_point[0] + 1)
    return "", 0


_COLONLESS = "a declaration without its ':' (property and value are separated by a colon)"
_CHARACTER = re.compile(rb"'(?:\\.|[^'\\\n])'")


def _quotes(text: bytes, quote: bytes) -> int:
    """How many unescaped `quote` characters `text` holds, character literals (`'"'`) left out."""
    if quote == b'"':
        text = _CHARACTER.sub(b"", text)
    return len(re.findall(rb"(?<!\\)(?:\\\\)*" + re.escape(quote), text))


def _in_string(node: tree_sitter.Node, quote: str) -> bool:
    """Whether `node`, just before a quote, is part of a string (its content, an escape, its opening quote)."""
    return node.type == quote or any(part in node.type for part in ("string", "escape", "fragment", "content"))


def _leaves_and_errors(root: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Every leaf and every ERROR node, in document order (an iterative walk: deep trees do not recurse)."""
    cursor = root.walk()
    while True:
        node = cursor.node
        assert node is not None
        if node.child_count == 0 or node.is_error:
            yield node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def _brackets(node: tree_sitter.Node) -> str:
    """The bracket characters of a punctuation token (`${` is one `{`, `]]` two `]`), or of a skipped character."""
    text = node.type if not node.is_error else (node.text or b"").decode("utf-8", "replace")
    if any(char.isalnum() for char in text):
        return ""
    return "".join(char for char in text if char in "()[]{}")


def _unbalanced(tokens: list[tuple[str, int]]) -> tuple[str, int]:
    stack: list[tuple[str, int]] = []
    for char, line in tokens:
        if char in _OPENERS:
            stack.append((char, line))
        elif stack and stack[-1][0] == _CLOSERS[char]:
            stack.pop()
        elif stack:
            opener, opened = stack[-1]
            return f"'{opener}' is closed by '{char}' on line {line}: its own closer is missing", opened
        else:
            return f"unmatched '{char}'", line
    if stack:
        opener, opened = stack[-1]
        return f"'{opener}' was never closed", opened
    return "", 0


def _content_end(code: bytes, start: int) -> int:
    """The byte offset (in the wrapped text) where the code's last non-blank character ends."""
    return start + len(code.rstrip())
