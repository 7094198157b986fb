"""The precision and recall measurements of docs/verification.md, on real material found on this machine.

Not a `bench_*` module (`make bench` skips it): it reads thousands of files and takes minutes. Run one study at a time:

    .venv/bin/python -m bench.local_material loops      # repetition-loop alarms on endings of intact text
    .venv/bin/python -m bench.local_material closers    # named closer failures on intact and damaged Markdown
    .venv/bin/python -m bench.local_material python     # Python excuses on intact and broken stdlib files
    .venv/bin/python -m bench.local_material shell      # shell excuses on intact and broken scripts (runs bash -n)
    .venv/bin/python -m bench.local_material yaml       # template excuses on YAML files holding {{ or {%

Every study is seeded; the numbers move only when the machine's files do.
"""

from __future__ import annotations

import ast
import collections
import gzip
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from random import Random

import yaml

from verdict.verify.closers import broken_fences
from verdict.verify.fences import scan_fences
from verdict.verify.loops import find_loop
from verdict.verify.python_syntax import check_python
from verdict.verify.shell_syntax import BASH_ARGV, interpret_bash, shell_script
from verdict.verify.yaml_syntax import check_yaml

STDLIB_311 = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")


def _files(patterns: list[tuple[str, str]]) -> list[Path]:
    found: set[Path] = set()
    for root, pattern in patterns:
        if Path(root).exists():
            found.update(path for path in Path(root).glob(pattern) if path.is_file() and not path.is_symlink())
    return sorted(found)


def _text(path: Path, limit: int = 4_000_000) -> str | None:
    try:
        raw = path.read_bytes()[:limit]
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None
    return text if text.strip() and "\0" not in text else None


def loops() -> Iterator[str]:
    """Alarms of the loop detector on intact text: whole files, and 5 prefixes ending at random line ends each."""
    paths = _files(
        [
            (str(STDLIB_311), "**/*.py"),
            ("/usr/share/doc", "**/*"),
            (sys.prefix, "lib/**/METADATA"),
            (sys.prefix, "lib/**/*.md"),
            ("/etc", "**/*"),
            ("/usr/bin", "*"),
            ("/usr/share", "**/*.md"),
            ("/usr/share", "**/*.txt"),
            ("/usr/share", "**/*.html"),
        ]
    )
    rng = Random(1)
    files = endings = 0
    alarms = []
    for path in paths:
        text = _text(path)
        if text is None:
            continue
        files += 1
        lines = text.split("\n")
        cuts = rng.sample(range(1, len(lines) + 1), min(5, len(lines)))
        for ending in [text, *("\n".join(lines[:cut]) for cut in cuts)]:
            endings += 1
            loop = find_loop(ending)
            if loop is not None:
                alarms.append(f"{path}: {loop.detail[:100]}")
    yield f"{files} files, {endings} endings, {len(alarms)} alarms"
    yield from alarms[:20]


def closers() -> Iterator[str]:
    """Named closer failures on intact Markdown, and the verdicts of four damages to one ``` block per file."""
    paths = _files([("/usr/share", "**/*.md"), (str(STDLIB_311.parent), "**/*.md"), ("/usr/lib", "**/*.md")])
    rng = Random(7)
    files = fenced = fired = 0
    outcome: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in paths:
        text = _text(path)
        if text is None:
            continue
        files += 1
        blocks = scan_fences(text)
        if not blocks:
            continue
        fenced += 1
        fired += bool(broken_fences(blocks))
        plain = [b for b in blocks if b.closed and not b.indent and b.fence == "```"]
        if not plain:
            continue
        lines = text.split("\n")
        for damage in ("cut", "text after", "indented", "shorter"):
            block = rng.choice(plain)
            closer = block.line + block.body_lines
            if closer >= len(lines) or lines[closer].strip() != "```" or block.body_lines < 1:
                continue
            if damage == "cut":
                damaged = lines[: block.line + rng.randint(1, block.body_lines)]
            elif damage == "text after":
                damaged = [*lines[:closer], "``` and that is it", *lines[closer + 1 :]]
            elif damage == "indented":
                damaged = [*lines[:closer], "    ```", *lines[closer + 1 :]]
            else:
                opener = ["````" + block.info]
                damaged = [*lines[: block.line - 1], *opener, *lines[block.line : closer], "```", *lines[closer + 1 :]]
            found = scan_fences("\n".join(damaged))
            named = broken_fences(found)
            verdict = (
                next(iter(named.values())).reason
                if named
                else "truncated"
                if any(not b.closed for b in found)
                else "all closed"
            )
            outcome[damage, verdict] += 1
    yield f"{files} Markdown files, {fenced} with fences, {fired} with a named closer failure"
    yield from (f"{damage}: {verdict} {count}" for (damage, verdict), count in sorted(outcome.items()))


def python_parses(code: str) -> bool:
    """Whether CPython's own parser accepts `code` (the independent reference the breakage studies use)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _break_python(kind: str, code: str, rng: Random) -> str | None:
    lines = code.split("\n")
    if kind == "closing bracket":
        positions = [i for i, char in enumerate(code) if char in ")]}"]
        if not positions:
            return None
        at = rng.choice(positions)
        return code[:at] + code[at + 1 :]
    if kind == "header colon":
        starts = ("def ", "if ", "for ", "class ", "while ", "with ", "try", "else", "elif ")
        headers = [
            i for i, line in enumerate(lines) if line.rstrip().endswith(":") and line.lstrip().startswith(starts)
        ]
        if not headers:
            return None
        at = rng.choice(headers)
        lines[at] = lines[at].rstrip()[:-1]
    elif kind == "open bracket":
        lines[rng.randrange(len(lines))] += " ("
    else:
        quoted = [i for i, line in enumerate(lines) if '"' in line or "'" in line]
        if not quoted:
            return None
        at = rng.choice(quoted)
        line = lines[at]
        quote = line.rfind('"') if '"' in line else line.rfind("'")
        lines[at] = line[:quote] + line[quote + 1 :]
    return "\n".join(lines)


def python() -> Iterator[str]:
    """Verdicts on 1,500 intact stdlib files of CPython 3.11 and four controlled breakages of each."""
    paths = [
        p for p in _files([(str(STDLIB_311), "**/*.py")]) if "site-packages" not in p.parts and "bad" not in p.name
    ]
    rng = Random(1)
    outcome: collections.Counter[tuple[str, str]] = collections.Counter()
    excused = []
    for path in rng.sample(paths, min(1500, len(paths))):
        code = _text(path)
        if code is None or not python_parses(code):
            continue
        outcome["intact", check_python(code).verdict.value] += 1
        for kind in ("closing bracket", "header colon", "open bracket", "quote"):
            broken = _break_python(kind, code, rng)
            if broken is None or python_parses(broken):
                continue
            result = check_python(broken)
            outcome[kind, result.verdict.value] += 1
            if result.verdict.value != "malformed":
                excused.append(f"{path.name} ({kind}): {result.detail[:90]}")
    yield from (f"{kind}: {verdict} {count}" for (kind, verdict), count in sorted(outcome.items()))
    yield from excused


def shell() -> Iterator[str]:
    """Verdicts of `bash -n` on intact shell scripts and three breakages of each (bash runs here, outside the
    server's runner: this is a measurement script, not the service)."""
    candidates = _files([("/usr/bin", "*"), ("/usr/sbin", "*"), ("/etc", "**/*.sh"), ("/usr/share", "**/*.sh")])
    scripts = []
    for path in candidates:
        head = path.read_bytes()[:64] if path.stat().st_size < 100_000 else b""
        if path.suffix == ".sh" or (head.startswith(b"#!") and (b"bash" in head or b"/sh" in head)):
            scripts.append(path)
    rng = Random(5)

    def check(code: str) -> str:
        script = shell_script(code)
        done = subprocess.run(BASH_ARGV, input=script.text, capture_output=True, text=True, env={}, timeout=10)
        return interpret_bash(script, done.returncode, done.stderr).verdict.value

    breakages: dict[str, Callable[[list[str]], list[int]]] = {
        "quote": lambda lines: [i for i, line in enumerate(lines) if '"' in line and not line.lstrip().startswith("#")],
        "closer": lambda lines: [i for i, line in enumerate(lines) if line.strip() in ("fi", "done", "esac", "}")],
        "paren": lambda lines: [i for i, line in enumerate(lines) if ")" in line and not line.lstrip().startswith("#")],
    }
    outcome: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in rng.sample(scripts, min(600, len(scripts))):
        code = _text(path)
        if code is None:
            continue
        verdict = check(code)
        outcome["intact", verdict] += 1
        if verdict != "ok":
            continue
        for kind, where in breakages.items():
            lines = code.split("\n")
            spots = where(lines)
            if not spots:
                continue
            at = rng.choice(spots)
            if kind == "closer":
                del lines[at]
            else:
                mark = '"' if kind == "quote" else ")"
                cut = lines[at].rfind(mark)
                lines[at] = lines[at][:cut] + lines[at][cut + 1 :]
            outcome[kind, check("\n".join(lines))] += 1
    yield from (f"{kind}: {verdict} {count}" for (kind, verdict), count in sorted(outcome.items()))


def yaml_templates() -> Iterator[str]:
    """Verdicts on YAML files holding `{{` or `{%`, and on breakages of their marker-free lines."""
    paths = [
        path
        for path in _files([("/usr", "**/*.y*ml"), ("/etc", "**/*.y*ml"), (str(STDLIB_311.parent), "**/*.y*ml")])
        if path.stat().st_size < 200_000
    ]
    rng = Random(3)
    outcome: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in paths:
        text = _text(path)
        if text is None or ("{{" not in text and "{%" not in text):
            continue
        verdict = check_yaml(text).verdict.value
        outcome["intact", verdict] += 1
        if verdict != "ok":
            continue
        lines = text.split("\n")
        spots = [i for i, line in enumerate(lines) if ":" in line and "{{" not in line and line.lstrip()[:1] != "#"]
        for _ in range(3 if spots else 0):
            damaged = list(lines)
            damaged[rng.choice(spots)] += " [unclosed"
            broken = "\n".join(damaged)
            try:
                list(yaml.load_all(broken, Loader=yaml.SafeLoader))
                continue
            except yaml.constructor.ConstructorError:
                continue
            except yaml.YAMLError:
                pass
            outcome["broken", check_yaml(broken).verdict.value] += 1
    yield from (f"{kind}: {verdict} {count}" for (kind, verdict), count in sorted(outcome.items()))


STUDIES: dict[str, Callable[[], Iterator[str]]] = {
    "loops": loops,
    "closers": closers,
    "python": python,
    "shell": shell,
    "yaml": yaml_templates,
}


def main(argv: list[str]) -> int:
    """Run the named studies (all of them without arguments)."""
    for name in argv or list(STUDIES):
        print(f"== {name}", flush=True)
        for line in STUDIES[name]():
            print(f"   {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
