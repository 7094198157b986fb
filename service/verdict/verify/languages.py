"""Every language VerifyResponse knows is one record: its names, how it is checked, what it forgives, its metric label.

Everything else is derived from `LANGUAGES`: the info-string aliases, the bounded `lang` metric label set, which blocks
parse in process (inline or in the parse pool) and which need a child process, what ListEvaluators tells callers,
and the docs' table. A new language is one `LanguageRecord` here plus its corpus rows (`tests/corpus/`); the
record-completeness test fails on a record missing a piece, so a forgotten piece never reaches a caller.

Unknown languages are unverifiable, never guessed at: a checker applied to the wrong language is a false alarm, and
"we could not check this" is not a failure.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from verdict.verify.html_syntax import check_html
from verdict.verify.json_syntax import check_json
from verdict.verify.lisp_syntax import check_lisp
from verdict.verify.markdown_syntax import check_markdown
from verdict.verify.markup_syntax import check_toml, check_xml
from verdict.verify.model import CodeCheck
from verdict.verify.python_syntax import check_python
from verdict.verify.sql_syntax import COMMON_DIALECTS, check_sql, check_sql_dialect
from verdict.verify.tree_syntax import GRAMMARS, check_tree
from verdict.verify.yaml_syntax import check_yaml

__all__ = [
    "LANGUAGES",
    "MAX_NAME_CHARS",
    "NO_LANGUAGE",
    "UNKNOWN_LANGUAGE",
    "Language",
    "LanguageRecord",
    "Languages",
    "Runs",
    "metric_label",
    "record_problems",
    "resolve_language",
]


class Runs(StrEnum):
    """Where a language's check runs."""

    IN_PROCESS = "in_process"
    """A pure function of the code: on the event loop up to `inline_parse_bytes`, in the parse pool above."""
    SUBPROCESS = "subprocess"
    """A child process through the runner (`tool` names it: bash -n)."""
    NOT_CHECKED = "not_checked"
    """Nothing structural is checked; `unchecked` says why."""


SUBPROCESS_TOOLS = frozenset({"bash"})
"""The child processes the Verifier knows how to run as a check (its `_check_<tool>` methods)."""


@dataclass(frozen=True)
class LanguageRecord:
    """One language: everything the verifier, the metrics, ListEvaluators and the docs need to know about it."""

    name: str
    """The name a BlockCheck reports (lower case)."""
    aliases: tuple[str, ...]
    """Info-string words that mean this language, compared lower case, `{.x}` and `{x}` unwrapped. The name is one."""
    label: str
    """The `lang` label of verdict_block_checks_total; the label set is bounded because it comes from the records."""
    runs: Runs
    checker: Callable[[str], CodeCheck] | None = None
    """The pure checker (IN_PROCESS only); picklable by reference, so pool workers can run it."""
    tool: str = ""
    """The child process (SUBPROCESS only), one of SUBPROCESS_TOOLS."""
    sees: str = ""
    """What the check can see, for callers (ListEvaluators) and the docs."""
    blind_to: str = ""
    """What it cannot see."""
    leniencies: tuple[str, ...] = ()
    """Each excuse that turns a parser failure into unverifiable, in words a caller can check."""
    unchecked: str = ""
    """NOT_CHECKED only: the BlockCheck detail, `{name}` standing for the info-string word."""
    reports_word: bool = False
    """Report the info-string word itself (`console`, `jsonc`) instead of `name`: a family of related words."""


def record_problems(record: LanguageRecord) -> list[str]:
    """What a record is missing or gets wrong; empty when it is complete. `Languages` refuses incomplete records."""
    problems = []
    if not record.name or record.name != record.name.strip().lower():
        problems.append("name must be a non-empty lower-case word")
    if not record.label or record.label != record.label.lower():
        problems.append("label must be a non-empty lower-case word")
    if any(alias != alias.strip().lower() or not alias for alias in record.aliases):
        problems.append("aliases must be non-empty lower-case words")
    match record.runs:
        case Runs.IN_PROCESS:
            if not callable(record.checker):
                problems.append("an in-process language needs a checker")
            if not record.sees or not record.blind_to:
                problems.append("a checked language must say what its check sees and is blind to")
        case Runs.SUBPROCESS:
            if record.tool not in SUBPROCESS_TOOLS:
                problems.append(f"a subprocess language needs a tool the verifier runs: {sorted(SUBPROCESS_TOOLS)}")
            if not record.sees or not record.blind_to:
                problems.append("a checked language must say what its check sees and is blind to")
        case Runs.NOT_CHECKED:
            if not record.unchecked:
                problems.append("an unchecked language must say why (unchecked)")
            if record.checker is not None:
                problems.append("an unchecked language cannot have a checker")
    return problems


@dataclass(frozen=True)
class Language:
    """A resolved info-string word: the name a BlockCheck reports, and the record that decides what happens."""

    name: str
    record: LanguageRecord

    @property
    def label(self) -> str:
        return self.record.label

    @property
    def runs(self) -> Runs:
        return self.record.runs

    @property
    def unchecked_reason(self) -> str:
        """Why the block is not parsed ("" when it is)."""
        return self.record.unchecked.format(name=self.name) if self.record.runs is Runs.NOT_CHECKED else ""


MAX_NAME_CHARS = 40
"""Longer info-string words are cut: a response should not echo a megabyte-long "language" back."""

UNKNOWN_LANGUAGE = LanguageRecord(
    "unknown", (), "other", Runs.NOT_CHECKED, unchecked="no structural check for {name}", reports_word=True
)
NO_LANGUAGE = LanguageRecord("?", (), "none", Runs.NOT_CHECKED, unchecked="no language on the fence")


@dataclass(frozen=True)
class Languages:
    """A set of records and everything derived from them. Construction refuses incomplete or clashing records."""

    records: tuple[LanguageRecord, ...]
    _aliases: dict[str, LanguageRecord] = field(init=False, repr=False, compare=False)
    _names: dict[str, LanguageRecord] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        aliases: dict[str, LanguageRecord] = {}
        names: dict[str, LanguageRecord] = {}
        for record in self.records:
            problems = record_problems(record)
            if problems:
                raise ValueError(f"language {record.name!r} is incomplete: {'; '.join(problems)}")
            if record.name in names:
                raise ValueError(f"language {record.name!r} is defined twice")
            names[record.name] = record
            for alias in {record.name, *record.aliases}:
                if alias in aliases:
                    raise ValueError(f"alias {alias!r} belongs to {aliases[alias].name!r} and {record.name!r}")
                aliases[alias] = record
        object.__setattr__(self, "_aliases", aliases)
        object.__setattr__(self, "_names", names)

    def resolve(self, word: str) -> Language:
        """The language of an info-string word (`Python`, `py3`, `{.python}`, `{python}` all resolve to python)."""
        name = word.strip().strip("{}").lstrip(".").lower()
        if not name:
            return Language(NO_LANGUAGE.name, NO_LANGUAGE)
        record = self._aliases.get(name)
        if record is not None:
            return Language(name if record.reports_word else record.name, record)
        if len(name) > MAX_NAME_CHARS:
            name = name[: MAX_NAME_CHARS - 1] + "…"
        return Language(name, UNKNOWN_LANGUAGE)

    def record(self, name: str) -> LanguageRecord:
        """The record called `name` (KeyError for none)."""
        return self._names[name]

    @functools.cached_property
    def metric_labels(self) -> tuple[str, ...]:
        """Every value the `lang` label of verdict_block_checks_total can take."""
        labels = dict.fromkeys(record.label for record in (*self.records, UNKNOWN_LANGUAGE, NO_LANGUAGE))
        return tuple(labels)

    def metric_label(self, name: str) -> str:
        """The bounded `lang` label for a BlockCheck's language name ("?" is a fence without an info string)."""
        return NO_LANGUAGE.label if name == NO_LANGUAGE.name else self.resolve(name).label

    def checked(self) -> Iterable[LanguageRecord]:
        """The records whose blocks are parsed."""
        return (record for record in self.records if record.runs is not Runs.NOT_CHECKED)


_TREE_SEES = (
    "brackets that never close or close nothing, and code that stops in the middle of a construct, after trying "
    "the fragment forms {forms}"
)
_TREE_BLIND = (
    "type and name errors (nothing is compiled); a cut that happens to land between two complete top-level "
    "constructs; errors the grammar recovers from with balanced brackets (reported unverifiable)"
)
_TREE_LENIENCIES = (
    "fragments: ok as soon as one fragment form parses (a method without its class, statements without a function)",
    "grammar gaps: a parse error with balanced brackets that does not reach the end of the code is unverifiable, "
    "because intact code the grammar does not know looks exactly like that",
)


def _tree(name: str, aliases: tuple[str, ...], label: str = "") -> LanguageRecord:
    forms = dict.fromkeys(form.name for grammar in GRAMMARS[name] for form in grammar.forms)
    return LanguageRecord(
        name,
        aliases,
        label or name,
        Runs.IN_PROCESS,
        functools.partial(check_tree, name),
        sees=_TREE_SEES.format(forms=", ".join(forms)),
        blind_to=_TREE_BLIND,
        leniencies=_TREE_LENIENCIES,
    )


def _not_earned(name: str, aliases: tuple[str, ...], why: str) -> LanguageRecord:
    """A language a grammar exists for but has not earned a check: its false alarms were measured above 1 %, or there
    was too little intact material to measure them. Unverifiable, with the reason (docs/verification.md)."""
    return LanguageRecord(
        name,
        aliases,
        "other",
        Runs.NOT_CHECKED,
        unchecked=f"no structural check for {{name}}: {why}",
        reports_word=True,
    )


_SQL_SEES = (
    "unterminated strings, quoted names and comments, unbalanced parentheses, and a statement cut at its end, "
    "as sqlglot reads {dialects}"
)
_SQL_BLIND = (
    "names, types and semantics; other refusals (vendor statements sqlglot does not know) are unverifiable, "
    "since intact vendor syntax looks just like them"
)
_SQL_LENIENCIES = ("a statement sqlglot reads as an opaque command is accepted (procedures, DO blocks)",)


def _sql(name: str, aliases: tuple[str, ...], dialects: tuple[str, ...]) -> LanguageRecord:
    """One SQL dialect (the fence word names it): sqlglot reads the block in that dialect."""
    return LanguageRecord(
        name,
        aliases,
        "sql",
        Runs.IN_PROCESS,
        functools.partial(check_sql_dialect, dialects),
        sees=_SQL_SEES.format(dialects=" or ".join(dialects)),
        blind_to=_SQL_BLIND,
        leniencies=_SQL_LENIENCIES,
    )


LANGUAGES = Languages(
    (
        LanguageRecord(
            "python",
            ("py", "python3", "py3", "ipython", "pycon", "python-repl"),
            "python",
            Runs.IN_PROCESS,
            check_python,
            sees="every syntax error CPython's own parser reports (ast.parse, this server's grammar)",
            blind_to="names, types, imports; grammar newer than the server's Python is unverifiable",
            leniencies=("doctest and REPL prompts", "IPython magics", "placeholders", "newer grammar"),
        ),
        LanguageRecord(
            "json",
            ("jsonl", "ndjson", "jsonlines"),
            "json",
            Runs.IN_PROCESS,
            check_json,
            sees="every RFC 8259 error, NaN and Infinity included; JSON Lines value by value",
            blind_to="schemas; duplicate keys are accepted",
            leniencies=("comments (JSONC)", "elisions (...)", "a bare key: value fragment"),
        ),
        LanguageRecord(
            "yaml",
            ("yml",),
            "yaml",
            Runs.IN_PROCESS,
            check_yaml,
            sees="scanner, parser and composer errors of a safe loader, every document of a stream",
            blind_to="truncation between keys (a cut YAML document is usually still YAML); schemas",
            leniencies=("unknown tags are plain data", "constructor errors", "templates ({{ }})"),
        ),
        LanguageRecord(
            "shell",
            ("bash", "sh", "zsh"),
            "shell",
            Runs.SUBPROCESS,
            tool="bash",
            sees="every error `bash -n` reports, unterminated here-documents and trailing line continuations",
            blind_to="commands that do not exist; zsh-only syntax is checked as bash",
            leniencies=("$ prompts and their output lines", "<placeholder> words"),
        ),
        _tree("javascript", ("js", "jsx", "mjs", "cjs", "node", "nodejs", "es6", "ecmascript")),
        _tree("typescript", ("ts", "tsx", "mts", "cts")),
        _tree("java", ()),
        _tree("c", ("h",)),
        _tree("cpp", ("c++", "cc", "cxx", "hpp", "hxx", "h++")),
        _tree("csharp", ("cs", "c#", "dotnet")),
        _tree("go", ("golang",)),
        _tree("rust", ("rs",)),
        _tree("ruby", ("rb",)),
        _tree("php", ()),
        _tree("css", ()),
        _tree("kotlin", ("kt", "kts")),
        _tree("swift", ()),
        _tree("scala", ("sc", "sbt")),
        _tree("elixir", ("ex", "exs")),
        _tree("lua", ()),
        _tree("haskell", ("hs",)),
        _tree("ocaml", ("ml", "mli")),
        _tree("solidity", ("sol",)),
        _tree("glsl", ("frag", "vert", "comp", "geom")),
        _not_earned("matlab", ("octave",), "the grammar charges 15 % of Octave's own intact library"),
        _not_earned("makefile", ("make", "mk", "gnumake"), "the grammar charges 2.6 % of intact Makefiles"),
        _not_earned("powershell", ("ps1", "pwsh"), "too little intact PowerShell was measured (33 files)"),
        _not_earned(
            "perl",
            ("pl", "pm", "perl5"),
            "the grammar's time grows with the square of an expression's length (4,000 terms: 0.4 s)",
        ),
        _not_earned("hcl", ("terraform", "tf", "hcl2"), "no intact HCL was measured"),
        LanguageRecord(
            "lisp",
            (
                "scheme",
                "scm",
                "racket",
                "rkt",
                "guile",
                "common-lisp",
                "commonlisp",
                "cl",
                "elisp",
                "emacs-lisp",
                "clojure",
                "clj",
                "cljs",
                "cljc",
                "edn",
            ),
            "lisp",
            Runs.IN_PROCESS,
            check_lisp,
            sees="forms that never close or close the wrong bracket, and strings that never end, outside comments "
            "(; and #| |#) and character literals (#\\( , \\( , ?\\( )",
            blind_to="names, arity and macros; reader extensions of one dialect (Hy's #[[ ]] strings) are not known",
            leniencies=("any balanced text is ok: a Lisp program is a sequence of forms",),
            reports_word=True,
        ),
        LanguageRecord(
            "toml",
            (),
            "toml",
            Runs.IN_PROCESS,
            check_toml,
            sees="every TOML 1.0 error the standard library's tomllib reports (unclosed arrays, strings, headers)",
            blind_to="a cut between two key/value lines (still TOML); schemas",
            leniencies=("a key or table defined twice: alternatives shown side by side",),
        ),
        LanguageRecord(
            "xml",
            ("svg", "xsd", "xsl", "xslt", "plist", "rss", "atom"),
            "xml",
            Runs.IN_PROCESS,
            check_xml,
            sees="well-formedness as expat reads it: unclosed and mismatched tags, bad tokens; several top-level "
            "elements are a fragment, not an error",
            blind_to="validity against a DTD or schema",
            leniencies=("entities and namespace prefixes declared outside the block",),
        ),
        LanguageRecord(
            "console",
            ("shell-session", "terminal"),
            "shell",
            Runs.NOT_CHECKED,
            unchecked="{name} transcript: commands mixed with their output",
            reports_word=True,
        ),
        LanguageRecord(
            "jsonc", ("json5",), "json", Runs.NOT_CHECKED, unchecked="{name} is not strict JSON", reports_word=True
        ),
        LanguageRecord(
            "html",
            ("htm", "xhtml"),
            "html",
            Runs.IN_PROCESS,
            check_html,
            sees="elements left open at the end and text that stops inside a tag, an attribute or a comment, as a "
            "browser's tree builder (html5lib, the WHATWG algorithm) reports them",
            blind_to="attributes and content models (any element is accepted anywhere); misnested or stray end tags, "
            "which browsers repair, are unverifiable",
            leniencies=("end tags the standard makes optional (<p>, <li>, <td>...)", "void elements (<br>, <img>)"),
        ),
        LanguageRecord(
            "sql",
            ("ansi", "ansisql"),
            "sql",
            Runs.IN_PROCESS,
            check_sql,
            sees=_SQL_SEES.format(dialects="any of " + ", ".join(COMMON_DIALECTS)),
            blind_to=_SQL_BLIND,
            leniencies=(*_SQL_LENIENCIES, "the block is ok as soon as one common dialect reads it"),
        ),
        _sql("postgresql", ("postgres", "psql", "plpgsql", "pgsql"), ("postgres",)),
        _sql("mysql", ("mariadb",), ("mysql",)),
        _sql("sqlite", ("sqlite3",), ("sqlite",)),
        _sql("tsql", ("mssql", "t-sql", "sqlserver"), ("tsql",)),
        _sql("plsql", ("oracle",), ("oracle",)),
        LanguageRecord(
            "dockerfile",
            ("docker", "containerfile"),
            "dockerfile",
            Runs.NOT_CHECKED,
            unchecked="no structural check for {name}: the available grammar rejects too much intact Dockerfile syntax",
            reports_word=True,
        ),
        LanguageRecord(
            "markdown",
            ("md", "mdx", "gfm", "commonmark"),
            "markdown",
            Runs.IN_PROCESS,
            check_markdown,
            sees="nested fences left open, found by the CommonMark scanner that reads the answer's own fences",
            blind_to="the nested blocks' code (a document's examples are often excerpts); prose, tables and lists, "
            "which any text satisfies; a document without nested fences is unverifiable",
            leniencies=("a nested fence its list item or quote closes is sloppy, not open",),
        ),
        LanguageRecord(
            "text",
            ("diff", "txt", "plaintext", "plain", "output", "log"),
            "other",
            Runs.NOT_CHECKED,
            unchecked="{name}: nothing structural to check",
            reports_word=True,
        ),
    )
)
"""Every language the server knows."""


def resolve_language(word: str) -> Language:
    """The language of an info-string word, from `LANGUAGES`."""
    return LANGUAGES.resolve(word)


def metric_label(name: str) -> str:
    """The bounded `lang` label for a BlockCheck's language name, from `LANGUAGES`."""
    return LANGUAGES.metric_label(name)
