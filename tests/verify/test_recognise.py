"""Untagged blocks: recognised on unmistakable evidence only, never charged when guessed; and the wrong-tag excuse,
which applies at the line a parser blamed and nowhere else."""

from __future__ import annotations

import pytest

from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline
from verdict.verify.recognise import Recognition, not_code, recognise, shell_command


def _answer(tag: str, body: str, closed: bool = True) -> str:
    return f"Here it is:\n\n```{tag}\n{body}" + ("```\n\nDone.\n" if closed else "")


RECOGNISED = [
    ("#!/usr/bin/env bash\nset -e\necho hi\n", "shell"),
    ("#!/usr/bin/env python3\nprint('hi')\n", "python"),
    ("#include <iostream>\nint main() {\n  std::cout << 1;\n}\n", "cpp"),
    ("#include <stdio.h>\nint main(void) { return 0; }\n", "c"),
    ("def area(r):\n    return 3.14 * r * r\n", "python"),
    ("import os\nprint(os.getcwd())\n", "python"),
    ('{\n  "name": "x",\n  "version": "1.0.0"\n}\n', "json"),
    ("<?php\necho 'hi';\n", "php"),
    ('<?xml version="1.0"?>\n<a/>\n', "xml"),
    ("<!DOCTYPE html>\n<html><body></body></html>\n", "html"),
    ("package main\n\nfunc main() {}\n", "go"),
    ("git init\ngit add .\ngit commit -m 'first'\n", "shell"),
    ("$ pip install requests\n$ npm install\n", "shell"),
    ('<div class="card">\n  <p>Hi</p>\n</div>\n', "html"),
    ("SELECT a, b\nFROM t\nWHERE a > 1;\n", "sql"),
    ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n", "yaml"),
    ("services:\n  web:\n    image: nginx\n", "yaml"),
    ('[package]\nname = "x"\nversion = "0.1.0"\n', "toml"),
]

LEFT_ALONE = [
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "+------+\n| box  |\n+------+\n",
    "   __\n  /  \\\n  \\__/\n",
    "[[1 2 3]\n [4 5 6]]\n",
    "This is just a sentence in a block.\n",
    "X:1\nT:Tune\nK:G\n|:GABc d2e2|\n",
    "const x = 1;\nconsole.log(x);\n",
    "def f(x) {\n  return x;\n}\n",
    "Select the option you want;\n",
    "<p>an unclosed paragraph of prose\n",
    "[section]\nkey = value\n",
]


@pytest.mark.parametrize(("body", "language"), RECOGNISED)
def test_unmistakable_evidence_is_recognised(body: str, language: str) -> None:
    recognition = recognise(body)
    assert recognition is not None
    assert recognition.language == language


@pytest.mark.parametrize("body", LEFT_ALONE)
def test_tables_art_output_prose_and_ambiguous_code_are_left_alone(body: str) -> None:
    assert recognise(body) is None
    assert verify_offline(_answer("", body)).verdict is Verdict.UNVERIFIABLE


def test_a_recognised_block_that_parses_counts_as_ok() -> None:
    result = verify_offline(_answer("", "#include <iostream>\nint main() {\n  std::cout << 1;\n}\n"))
    assert result.verdict is Verdict.OK
    assert result.checks[0].language == "cpp"
    assert "untagged, read as cpp" in result.checks[0].detail


def test_a_guessed_language_is_never_charged() -> None:
    result = verify_offline(_answer("", "def f(x):\n    return (x + 1\n"))
    assert result.verdict is Verdict.UNVERIFIABLE
    assert "not charged, the language was guessed" in result.checks[0].detail


def test_a_cut_untagged_block_is_still_truncated() -> None:
    assert verify_offline(_answer("", "def f(x):\n    return x\n", closed=False)).verdict is Verdict.TRUNCATED


WRONG_TAGS = [
    ("csharp", "git init\ndotnet new console\n", "a shell command"),
    ("python", "[[1 2 3]\n [4 5 6]]\n", "program output"),
    ("css", "+------+\n| box  |\n+------+\n", "a table or box drawing"),
]


@pytest.mark.parametrize(("tag", "body", "what"), WRONG_TAGS)
def test_another_language_at_the_error_line_is_not_charged(tag: str, body: str, what: str) -> None:
    result = verify_offline(_answer(tag, body))
    assert result.verdict is Verdict.UNVERIFIABLE, result
    assert f"is {what}, not {tag}" in result.checks[0].detail


def test_the_wrong_tag_excuse_applies_only_at_the_error_line() -> None:
    """A box drawing in a comment above a real error does not excuse it; nor does a command in a string."""
    css = "/* +------+ */\n.a {\n  color: red;\n"
    assert verify_offline(_answer("css", css)).verdict is Verdict.MALFORMED
    csharp = 'class A {\n  void F() {\n    Run("git init");\n  \n}\n'
    assert verify_offline(_answer("csharp", csharp)).verdict is Verdict.MALFORMED
    python = "x = [1, 2, 3]\nprint((x)\n"
    assert verify_offline(_answer("python", python)).verdict is Verdict.MALFORMED


def test_line_classifiers() -> None:
    assert shell_command("$ docker compose up -d")
    assert shell_command("sudo apt-get install -y curl")
    assert not shell_command("git = Repo()")
    assert not shell_command("make(chan int)")
    assert not_code("┌──────┐")
    assert not_code("|---|---|")
    assert not_code("[[1 2 3]")
    assert not not_code("x = [1, 2, 3]")
    assert not not_code("});")
    assert not not_code("if (a) {")


def test_leading_comments_and_docstrings_do_not_hide_the_evidence() -> None:
    python = '#!/no/shebang here\n"""A module.\n\nMore words.\n"""\n# comment\nimport os\n'
    assert recognise(python.replace("#!/no/shebang here\n", "")) == Recognition(
        "python", "a Python header first (import os)"
    )
    go = '// Copyright 2020\n// license\n\npackage main\n\nimport "fmt"\n'
    recognition = recognise(go)
    assert recognition is not None
    assert recognition.language == "go"
    rust = "//! Crate docs\nuse std::collections::HashMap;\n"
    recognition = recognise(rust)
    assert recognition is not None
    assert recognition.language == "rust"
