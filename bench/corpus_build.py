"""Build the pinned verification corpus from real, intact code found on this machine.

`python -m bench.corpus_build [--dry-run]` rewrites `tests/corpus/verify.jsonl.xz` and its checksum. It needs the
source trees listed in `SOURCES` (package files; Debian's golang-src, rust-src and ruby; a JDK's src.zip; one PyPI
sdist for C#, see `SDISTS`); CI never runs it: the
committed corpus is what the tests and `make bench` read.

Each intact sample is stored as text (a whole file up to `MAX_FILE_BYTES`, or a fragment: a function or method cut
out along the syntax tree, the shape snippets in answers take). Breakages are stored as edits of an intact sample, so
they cost a few bytes each:

- `cut_open`: the text cut at a line inside a construct, the fence left open (an answer that ran out);
- `cut_closed`: the same cut with the fence re-closed (the model closed the fence anyway, or the caller trimmed);
- `drop_closer`: one closing delimiter deleted (`}`, `)`, `]`, `end`, an XML end tag, a TOML `]` or quote).

Cuts and drops are chosen from the intact text's own structure (a construct whose closing delimiter the cut or drop
removes), so every broken sample is broken by construction, not by a guess.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import json
import lzma
import random
import re
import sys
import tokenize
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from bench.corpus import CORPUS_PATH, LANGUAGES_PATH, LONG_TAIL_PATH, checksum_path, load
from verdict.verify.fences import scan_fences
from verdict.verify.lisp_syntax import brackets as lisp_brackets
from verdict.verify.tree_syntax import GRAMMARS

MAX_FILE_BYTES = 12_000
FRAGMENT_LINES = (4, 160)
SEED = 20261201
SDISTS = str(Path.home() / ".cache" / "verdict-corpus")
"""Unpacked source distributions for languages the machine has no sources of: C# comes from pythonnet's sdist
(`pip download --no-deps --no-binary :all: pythonnet`, unpacked here)."""


@dataclass(frozen=True)
class Source:
    """Where a language's intact material lives on the build machine, and the fence tags its samples use."""

    language: str
    patterns: tuple[str, ...]
    tags: tuple[str, ...]
    exclude: str = r"\.min\.|/test/|/tests/|/testdata/|/ui/"


SOURCES = (
    Source(
        "python",
        ("/root/.pyenv/versions/3.13.0/lib/python3.13/*.py", "/root/.pyenv/versions/3.13.0/lib/python3.13/*/*.py"),
        ("python", "py"),
        exclude=r"/tests?/|/idle_test/|lib2to3|bad",
    ),
    Source(
        "json",
        ("/work/main/clients/typescript/node_modules/**/*.json", "/usr/share/**/*.json"),
        ("json",),
        exclude=r"/tests?/|/testdata/|tsconfig|jsconfig|\.vscode|eslintrc",  # those are JSONC, not JSON
    ),
    Source(
        "yaml",
        (
            "/root/.pyenv/versions/*/lib/python3*/site-packages/**/*.y*ml",
            "/usr/share/**/*.y*ml",
            "/usr/lib/google-cloud-sdk/lib/googlecloudsdk/**/*.yaml",
        ),
        ("yaml", "yml"),
        # gcloud's resources.yaml files use anchors defined in another file: not standalone YAML.
        exclude=r"/tests?/|/testdata/|\.yamllint|googlecloudsdk/.*/resources\.yaml",
    ),
    Source(
        "javascript",
        (
            "/work/main/clients/typescript/node_modules/**/*.js",
            "/work/main/tests/judges/real_cli/node_modules/**/*.js",
            "/usr/lib/node_modules/**/*.mjs",
        ),
        ("javascript", "js", "jsx", "mjs", "node"),
    ),
    Source(
        "typescript",
        (
            "/work/main/clients/typescript/node_modules/**/*.ts",
            "/work/main/tests/judges/real_cli/node_modules/**/*.ts",
            "/work/main/clients/typescript/src/**/*.ts",
            "/usr/lib/node_modules/**/*.ts",
        ),
        ("typescript", "ts", "tsx"),
    ),
    Source("java", ("zip:/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip:java.base/java/",), ("java",)),
    Source("c", ("/usr/share/go-1.19/src/**/*.c", "/usr/include/*.h", "/usr/include/linux/*.h"), ("c", "h")),
    Source(
        "cpp",
        ("/usr/include/c++/12/bits/*.h", "/usr/include/c++/12/*", "/usr/src/rustc-1.63.0/compiler/**/*.cpp"),
        ("cpp", "c++", "cc"),
    ),
    Source("csharp", (f"{SDISTS}/pythonnet-*/src/**/*.cs",), ("csharp", "cs", "c#")),
    Source("go", ("/usr/share/go-1.19/src/**/*.go",), ("go", "golang"), exclude=r"/testdata/|_test\.go"),
    Source("rust", ("/usr/src/rustc-1.63.0/library/**/*.rs",), ("rust", "rs"), exclude=r"/tests?/|/benches/"),
    Source("ruby", ("/usr/lib/ruby/3.1.0/**/*.rb",), ("ruby", "rb")),
    Source("php", ("/usr/lib/google-cloud-sdk/platform/google_appengine/php/**/*.php",), ("php",)),
    Source("css", ("/usr/share/**/*.css", "/root/.pyenv/versions/3.11.7/lib/**/*.css"), ("css",)),
    Source("xml", ("/usr/share/**/*.xml",), ("xml", "svg"), exclude=r"bad|/tests?/"),
    Source("toml", ("/usr/src/rustc-1.63.0/**/*.toml", "/root/.pyenv/versions/3.13.0/lib/**/*.toml"), ("toml",)),
)

LONG_TAIL_SOURCES = (
    Source("html", ("/usr/share/doc/**/*.html", "/usr/share/**/*.html"), ("html", "htm"), exclude=r"/tests?/"),
    Source("sql", ("/usr/share/postgresql*/**/*.sql",), ("sql",)),
    Source("postgresql", ("/usr/share/postgresql*/**/*.sql",), ("postgresql", "postgres", "psql")),
    Source(
        "markdown",
        (
            "/usr/share/doc/**/*.md",
            "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/**/*.md",
            "/usr/lib/node_modules/**/*.md",
        ),
        ("markdown", "md"),
        exclude=r"/tests?/|CHANGELOG|HISTORY",
    ),
    Source(
        "lisp",
        (f"{sys.prefix}/lib/**/tree_sitter_*/**/*.scm", "/usr/share/**/*.el"),
        ("scheme", "lisp", "elisp", "racket"),
        exclude=r"/tests?/|/tutor/",
    ),
)
"""The languages written to the second corpus file (`tests/corpus/verify-long-tail.jsonl.xz`), so the first one's
rows stay exactly as they were measured. The SQL material is PostgreSQL's own extension scripts, read once with the
common-dialect checker (`sql`) and once with the PostgreSQL one."""

DEBS = f"{SDISTS}/deb"
"""Debian packages unpacked (`apt-get download P && dpkg -x P.deb deb/P`), never installed: hugs (Haskell's
libraries as source), ocaml (its standard library), lua-penlight, lua-busted, lua-ldoc and neovim-runtime (Lua)."""

GITHUB = f"{SDISTS}/github"
"""Files copied verbatim from public GitHub repositories (the file name is `owner__repo__path`) for languages no
package here ships as source: Kotlin (okhttp, moshi, koin, kotlinx.coroutines), Swift (swift-nio, swift-argument-parser,
Alamofire, SnapKit, RxSwift, Vapor, swift-composable-architecture), Scala (scala, akka, spark, cats, play) and Elixir
(elixir, phoenix, ecto, plug, absinthe, plausible)."""

NPM = f"{SDISTS}/npm"
"""npm packages unpacked (`npm pack P && tar xzf`): Solidity from @openzeppelin/contracts, @uniswap/v3-core,
@chainlink/contracts and solmate; GLSL from lygia (a shader library)."""

LANGUAGE_SOURCES = (
    Source("kotlin", (f"{GITHUB}/kotlin/*.kt",), ("kotlin", "kt")),
    Source("swift", (f"{GITHUB}/swift/*.swift",), ("swift",)),
    Source("scala", (f"{GITHUB}/scala/*.scala",), ("scala",)),
    Source("elixir", (f"{GITHUB}/elixir/*.ex",), ("elixir", "ex")),
    # ldoc's builtin/ files are documentation stubs (`function load (ld [, source])`), not Lua.
    Source("lua", (f"{DEBS}/*/usr/share/lua/**/*.lua", f"{DEBS}/neovim-runtime/**/*.lua"), ("lua",), r"/builtin/"),
    # hugsbase is Hugs' own primitives (`primitive f :: ...`), not Haskell.
    Source("haskell", (f"{DEBS}/hugs/usr/lib/hugs/**/*.hs",), ("haskell", "hs"), r"/hugsbase/"),
    Source("solidity", (f"{NPM}/*/package/**/*.sol",), ("solidity", "sol")),
    Source("glsl", (f"{NPM}/lygia/package/**/*.glsl",), ("glsl", "frag")),
    Source("ocaml", (f"{DEBS}/ocaml/usr/lib/ocaml/**/*.ml", f"{DEBS}/ocaml/usr/lib/ocaml/**/*.mli"), ("ocaml", "ml")),
)
"""The languages of the third corpus file (`tests/corpus/verify-languages.jsonl.xz`), each measured before its record
was added; the ones that failed the bar (MATLAB on Octave's library and Makefiles above 1 %, Perl's grammar quadratic on
a long expression) stay unchecked."""

FRAGMENT_NODES = {"elixir": re.compile(r"^call$"), "ocaml": re.compile(r"^value_definition$")}
"""Languages whose functions are not `function`/`method` nodes: Elixir's `def` is a call with a do block."""

_HTML_OPTIONAL_END = re.compile(
    rb"</(?:p|li|dt|dd|option|optgroup|tr|td|th|tbody|thead|tfoot|colgroup|caption|html|head|body|rt|rp)\s*>", re.I
)


def _files(source: Source) -> Iterator[tuple[str, str]]:
    """(path, text) of every readable UTF-8 file of a source, in path order."""
    seen: set[str] = set()
    for pattern in source.patterns:
        if pattern.startswith("zip:"):
            archive, prefix = pattern[4:].split(":", 1)
            with zipfile.ZipFile(archive) as bundle:
                for name in sorted(bundle.namelist()):
                    if name.startswith(prefix) and name.endswith(".java"):
                        yield f"{archive}!{name}", bundle.read(name).decode("utf-8", "replace")
            continue
        for path in sorted(glob.glob(pattern, recursive=True)):
            if path in seen or re.search(source.exclude, path) or not Path(path).is_file():
                continue
            seen.add(path)
            try:
                yield path, Path(path).read_text("utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def _closers(language: str, text: str) -> list[tuple[int, int, int]]:
    """(start, end, construct start) byte ranges of closing delimiters whose construct spans several lines."""
    data = text.encode()
    if language == "xml":
        hidden = [m.span() for m in re.finditer(rb"(?s)<!--.*?-->|<!\[CDATA\[.*?\]\]>", data)]
        tags = [m.span() for m in re.finditer(rb"</[A-Za-z_][\w.:-]*\s*>", data)]
        return [(start, end, 0) for start, end in tags if not any(a <= start < b for a, b in hidden)]
    if language == "html":
        hidden = [m.span() for m in re.finditer(rb"(?is)<!--.*?-->|<script.*?</script>|<style.*?</style>", data)]
        tags = [m.span() for m in re.finditer(rb"</[A-Za-z][\w-]*\s*>", data) if not _HTML_OPTIONAL_END.match(m[0])]
        return [(start, end, 0) for start, end in tags if not any(a <= start < b for a, b in hidden)]
    if language in ("sql", "postgresql"):
        return _sql_closers(data)
    if language == "markdown":
        return _markdown_closers(text)
    if language == "lisp":
        return _lisp_closers(text)
    if language == "python":
        return _python_closers(text)
    if language == "json":
        return _json_closers(data)
    if language == "yaml":
        return []
    if language == "toml":
        headers = [m.span() for m in re.finditer(rb"(?m)^\[[^\]\n]*\]", data)]
        return [(end - 1, end, start) for start, end in headers]
    if language not in GRAMMARS:
        return []
    tree = _parser(language).parse(data)
    found: list[tuple[int, int, int]] = []
    cursor = tree.root_node.walk()
    while True:
        node = cursor.node
        assert node is not None
        if node.child_count and node.end_point[0] > node.start_point[0] + 1 and not node.has_error:
            last = node.children[-1]
            if last.type in ("}", ")", "]", "end", "done"):
                found.append((last.start_byte, last.end_byte, node.start_byte))
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _python_closers(text: str) -> list[tuple[int, int, int]]:
    """Closing brackets as Python's own tokenizer sees them (never one inside a string or a comment)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    found: list[tuple[int, int, int]] = []
    openers: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.OP or token.string not in "()[]{}":
                continue
            row, column = token.start
            start = offsets[row - 1] + len(lines[row - 1][:column].encode())
            if token.string in "([{":
                openers.append(start)
            elif openers:
                opened = openers.pop()
                if text.encode()[opened:start].count(b"\n"):
                    found.append((start, start + 1, opened))
    except (tokenize.TokenError, SyntaxError):
        return []
    return found


def _markdown_closers(text: str) -> list[tuple[int, int, int]]:
    """The closing fence lines of a Markdown document's nested blocks (their whole line, newline kept out)."""
    offsets = [0]
    for line in text.encode().split(b"\n"):
        offsets.append(offsets[-1] + len(line) + 1)
    found = []
    for block in scan_fences(text):
        if block.closed and block.indent == 0 and block.body_lines:
            closer = block.line + block.body_lines  # zero-based index of the closing fence line
            if closer + 1 < len(offsets):
                found.append((offsets[closer], offsets[closer + 1] - 1, offsets[block.line - 1]))
    return found


def _lisp_closers(text: str) -> list[tuple[int, int, int]]:
    """Closing brackets of Lisp forms spanning lines, as the checker's own lexer sees them (byte offsets)."""
    found: list[tuple[int, int, int]] = []
    openers: list[int] = []
    for char, offset in lisp_brackets(text):
        if char in "([{":
            openers.append(offset)
        elif char in ")]}" and openers:
            opened = openers.pop()
            if "\n" in text[opened:offset]:
                start = len(text[:offset].encode())
                found.append((start, start + 1, len(text[:opened].encode())))
    return found


def _sql_closers(data: bytes) -> list[tuple[int, int, int]]:
    """Closing parentheses of SQL outside its strings, quoted names, comments and dollar-quoted bodies."""
    hidden = [m.span() for m in re.finditer(rb"(?s)'(?:[^']|'')*'|\"[^\"]*\"|--[^\n]*|/\*.*?\*/|(\$\w*\$).*?\1", data)]
    found: list[tuple[int, int, int]] = []
    openers: list[int] = []
    position = 0
    for start, end in [*hidden, (len(data), len(data))]:
        for index in range(position, start):
            byte = data[index]
            if byte == 0x28:
                openers.append(index)
            elif byte == 0x29 and openers:
                opened = openers.pop()
                if data[opened:index].count(b"\n"):
                    found.append((index, index + 1, opened))
        position = max(position, end)
    return found


def _json_closers(data: bytes) -> list[tuple[int, int, int]]:
    """Closing brackets of a JSON text outside its strings."""
    found: list[tuple[int, int, int]] = []
    openers: list[int] = []
    in_string = escaped = False
    for index, byte in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            openers.append(index)
        elif byte in b"]}" and openers:
            opened = openers.pop()
            if data[opened:index].count(b"\n"):
                found.append((index, index + 1, opened))
    return found


def _parser(language: str) -> tree_sitter.Parser:
    return GRAMMARS[language][0].parser()


def _fragments(language: str, text: str, rng: random.Random) -> Iterator[str]:
    """Functions and methods cut out of a file along its syntax tree (a method without its class); for Lisp, top-level
    forms of several lines."""
    if language == "lisp":
        forms: list[tuple[int, int]] = []
        depth, start = 0, 0
        for char, offset in lisp_brackets(text):
            if char in "([{":
                start = offset if depth == 0 else start
                depth += 1
            elif char in ")]}" and depth:
                depth -= 1
                lines = text.count("\n", start, offset) + 1
                if depth == 0 and FRAGMENT_LINES[0] <= lines <= FRAGMENT_LINES[1]:
                    forms.append((text.rfind("\n", 0, start) + 1, offset + 1))
        for begin, end in rng.sample(forms, min(2, len(forms))):
            yield text[begin:end] + "\n"
        return
    if language not in GRAMMARS:
        return
    data = text.encode()
    tree = _parser(language).parse(data)
    if tree.root_node.has_error:
        return
    wanted = FRAGMENT_NODES.get(
        language, re.compile(r"function|method|func_literal|function_item|impl_item|rule_set|constructor")
    )
    nodes = []
    cursor = tree.root_node.walk()
    while True:
        node = cursor.node
        assert node is not None
        lines = node.end_point[0] - node.start_point[0] + 1
        column = node.start_point[1]
        starts_line = column < 200 and not data[node.start_byte - column : node.start_byte].strip()
        if wanted.search(node.type) and FRAGMENT_LINES[0] <= lines <= FRAGMENT_LINES[1] and starts_line:
            nodes.append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                break
        else:
            continue
        break
    for node in rng.sample(nodes, min(2, len(nodes))):
        start = data.rfind(b"\n", 0, node.start_byte) + 1
        body = data[start : node.end_byte].decode()
        indent = min((len(line) - len(line.lstrip()) for line in body.splitlines() if line.strip()), default=0)
        yield "\n".join(line[indent:] for line in body.splitlines()) + "\n"


def _readable(text: str) -> bool:
    """Code a person wrote and a model might answer with: not empty, not generated or minified (long lines)."""
    return len(text) >= 40 and bool(text.strip()) and max(map(len, text.splitlines()), default=0) <= 400


def build(per_language: int, rng: random.Random, sources: tuple[Source, ...] = SOURCES) -> list[dict[str, object]]:
    """Intact samples and their breakages, per language."""
    rows: list[dict[str, object]] = []
    for source in sources:
        files = [(path, text) for path, text in _files(source) if _readable(text)]
        rng.shuffle(files)
        intact: list[tuple[str, str, str]] = []
        for path, text in files:
            if len(intact) >= per_language:
                break
            if len(text.encode()) <= MAX_FILE_BYTES:
                intact.append((path, "file", text))
            for fragment in _fragments(source.language, text, rng):
                if len(intact) < per_language and len(intact) % 2:
                    intact.append((path, "fragment", fragment))
        for number, (path, shape, text) in enumerate(intact):
            sample_id = f"{source.language}-{number:04d}"
            tag = source.tags[number % len(source.tags)]
            rows.append(
                {"id": sample_id, "lang": source.language, "tag": tag, "source": path, "shape": shape, "text": text}
            )
            closers = [c for c in _closers(source.language, text) if text.encode()[c[0] : c[1]].strip()]
            data = text.encode()
            if not closers:
                # No construct to cut inside (YAML, flat TOML): the open fence alone must say "truncated".
                line_ends = [match.end() for match in re.finditer(rb"\n", data)][:-1]
                if line_ends:
                    cut = rng.choice(line_ends)
                    rows.append({"id": f"{sample_id}-cut", "of": sample_id, "kind": "cut_open", "cut": cut})
                continue
            start, end, opened = rng.choice(closers)
            # A cut at the end of a line strictly inside the construct, so its closer is gone.
            first_line_end = data.find(b"\n", opened)
            cut_points = [
                match.end() for match in re.finditer(rb"\n", data[:start]) if match.end() > first_line_end + 1
            ]
            if cut_points:
                cut = rng.choice(cut_points)
                rows.append({"id": f"{sample_id}-cut", "of": sample_id, "kind": "cut_open", "cut": cut})
                rows.append({"id": f"{sample_id}-cutc", "of": sample_id, "kind": "cut_closed", "cut": cut})
            elif line_ends := [match.end() for match in re.finditer(rb"\n", data)][:-1]:
                # Only one-line constructs (TOML headers): the open fence alone must say "truncated".
                rows.append(
                    {"id": f"{sample_id}-cut", "of": sample_id, "kind": "cut_open", "cut": rng.choice(line_ends)}
                )
            start, end, _ = rng.choice(closers)
            rows.append({"id": f"{sample_id}-drop", "of": sample_id, "kind": "drop_closer", "drop": [start, end]})
        print(f"{source.language}: {len(intact)} intact from {len(files)} files", file=sys.stderr)
    return rows


QUOTED_STRINGS = {
    "javascript": ("string",),
    "typescript": ("string",),
    "java": ("string_literal",),
    "c": ("string_literal",),
    "cpp": ("string_literal",),
    "csharp": ("string_literal",),
    "go": ("interpreted_string_literal",),
    "rust": ("string_literal",),
}
"""The string node of each C-family grammar whose closing quote a `drop_quote` breakage deletes."""

UNTAGGED = ("python", "c", "cpp", "json", "xml", "go", "rust")
"""Languages whose intact samples are also shown without a tag (`untagged` rows: never a failure)."""


def shape_rows(base: list[dict[str, object]], rng: random.Random) -> list[dict[str, object]]:
    """Breakages and shapes the first file lacks, as edits of its intact samples (referenced by id):

    - `drop_quote`: the closing `"` of a one-line string literal deleted (C-family languages);
    - `drop_colon`: the `:` of a CSS declaration deleted;
    - `untagged`: the intact sample with no info string on its fence."""
    rows: list[dict[str, object]] = []
    for row in base:
        if "text" not in row:
            continue
        language, text, sample_id = str(row["lang"]), str(row["text"]), str(row["id"])
        data = text.encode()
        if language in QUOTED_STRINGS or language == "css":
            tree = _parser(language).parse(data)
            wanted = QUOTED_STRINGS.get(language, ("declaration",))
            picks: list[tuple[int, int]] = []
            cursor = tree.root_node.walk()
            while True:
                node = cursor.node
                assert node is not None
                if node.type in wanted and node.start_point[0] == node.end_point[0] and not node.has_error:
                    if language == "css":
                        colons = [child for child in node.children if child.type == ":"]
                        picks.extend((colon.start_byte, colon.end_byte) for colon in colons[:1])
                    elif node.children and node.children[-1].type == '"' and data[node.start_byte] == ord('"'):
                        picks.append((node.children[-1].start_byte, node.children[-1].end_byte))
                if cursor.goto_first_child():
                    continue
                while not cursor.goto_next_sibling():
                    if not cursor.goto_parent():
                        break
                else:
                    continue
                break
            if picks:
                kind = "drop_colon" if language == "css" else "drop_quote"
                start, end = rng.choice(picks)
                rows.append({"id": f"{sample_id}-{kind}", "of": sample_id, "kind": kind, "drop": [start, end]})
        if language in UNTAGGED and rng.random() < 0.5:
            rows.append({"id": f"{sample_id}-untagged", "of": sample_id, "kind": "untagged"})
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-language", type=int, default=200)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--long-tail", action="store_true", help="build the second file (LONG_TAIL_SOURCES)")
    parser.add_argument("--languages", action="store_true", help="build the third file (LANGUAGE_SOURCES)")
    args = parser.parse_args(argv)
    sources: tuple[Source, ...] = SOURCES
    path = CORPUS_PATH
    if args.long_tail:
        sources, path = LONG_TAIL_SOURCES, LONG_TAIL_PATH
    elif args.languages:
        sources, path = LANGUAGE_SOURCES, LANGUAGES_PATH
    rows = build(args.per_language, random.Random(SEED), sources)
    if args.long_tail:
        rows += shape_rows(load((CORPUS_PATH,)), random.Random(SEED + 1))
    payload = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows).encode()
    packed = lzma.compress(payload, preset=9 | lzma.PRESET_EXTREME)
    print(f"{len(rows)} rows, {len(payload)} bytes, {len(packed)} packed", file=sys.stderr)
    if not args.dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(packed)
        checksum_path(path).write_text(hashlib.sha256(packed).hexdigest() + "  " + path.name + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
