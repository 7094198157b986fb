"""Python blocks: real shapes from documentation and model answers, each leniency, and the parser's limits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.python_syntax import GRAMMAR, NEWER_GRAMMAR, check_python, newer_grammar_feature

OK, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.MALFORMED, Verdict.UNVERIFIABLE
SERVICE = Path(__file__).resolve().parents[2] / "service"


def test_plain_code_parses() -> None:
    assert check_python("import json\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n") == (
        CodeCheck(OK)
    )


@pytest.mark.parametrize(
    ("code", "message", "line"),
    [
        ("def greet(name)\n    return f'hi {name}'\n", "expected ':'", 1),
        ("items = [1, 2,\n         3\nprint(items)\n", "'[' was never closed", 1),
        ("x = 1\n    y = 2\n", "unexpected indent", 2),
        ("print 'hello'\n", "Missing parentheses in call to 'print'. Did you mean print(...)?", 1),
        ("x = 1\x00\n", "source code string cannot contain null bytes", 0),
    ],
)
def test_syntax_errors_are_malformed_with_the_parsers_words_and_line(code: str, message: str, line: int) -> None:
    assert check_python(code) == CodeCheck(MALFORMED, message, line)


def test_a_doctest_session_is_checked_example_by_example() -> None:
    session = (
        ">>> from fractions import Fraction\n"
        ">>> Fraction(16, -10)\n"
        "Fraction(-8, 5)\n"
        ">>> for d in (2, 3):\n"
        "...     print(Fraction(1, d))\n"
        "...\n"
        "1/2\n"
        "1/3\n"
    )
    result = check_python(session)
    assert result.verdict is OK
    assert "3 session example(s)" in result.detail


def test_a_broken_doctest_example_is_malformed_on_its_own_line() -> None:
    session = ">>> x = 1\n>>> if x:\n...     print(x\n...\n"
    assert check_python(session) == CodeCheck(MALFORMED, "'(' was never closed (session prompts removed)", 3)


def test_a_doctest_example_that_runs_on_without_continuation_prompts_is_unverifiable() -> None:
    session = '>>> import orjson\n>>> orjson.dumps({"a": [1,\n2]})\nb\'{"a":[1,2]}\'\n'
    result = check_python(session)
    assert result.verdict is UNVERIFIABLE
    assert result.line == 3
    assert "unprompted line" in result.detail


def test_an_ipython_session_is_checked_without_its_prompts() -> None:
    session = (
        "In [1]: import numpy as np\n\n"
        "In [2]: def f(x):\n   ...:     return x ** 2\n   ...:\n\n"
        "In [3]: f(np.arange(3))\nOut[3]: array([0, 1, 4])\n"
    )
    assert check_python(session).verdict is OK


def test_ipython_magics_and_shell_escapes_are_dropped() -> None:
    cell = '%matplotlib inline\n!pip install pandas\nimport pandas as pd\ndf = pd.read_csv("data.csv")\ndf.head()\n'
    assert check_python(cell) == CodeCheck(OK, "checked with IPython magics and $ prompts dropped")


def test_an_error_after_dropped_lines_names_the_original_line() -> None:
    cell = "%load_ext autoreload\n!ls\nimport os\nos.path.join(\n"
    assert check_python(cell) == CodeCheck(MALFORMED, "'(' was never closed (IPython magics and $ prompts dropped)", 4)


def test_a_cell_magic_for_another_language_is_unverifiable() -> None:
    result = check_python("%%bash\nls -la | grep .py\n")
    assert result.verdict is UNVERIFIABLE
    assert "%%bash" in result.detail


def test_a_timing_cell_magic_is_dropped() -> None:
    assert check_python("%%timeit\nsum(range(100))\n").verdict is OK


def test_shell_prompt_lines_in_a_python_block_are_dropped() -> None:
    block = '$ pip install requests\nimport requests\nr = requests.get("https://example.com")\n'
    assert check_python(block).verdict is OK
    assert check_python("$ python manage.py migrate\n").verdict is UNVERIFIABLE


def test_an_indented_method_cut_out_of_a_class_is_dedented() -> None:
    fragment = (
        "    def save(self, *args, **kwargs):\n"
        "        self.slug = slugify(self.title)\n"
        "        super().save(*args, **kwargs)\n"
    )
    assert check_python(fragment) == CodeCheck(OK, "checked with fragment dedented")


def test_a_fragment_that_starts_deep_and_dedents_is_nested() -> None:
    fragment = (
        "            return cached\n"
        "        value = compute()\n"
        "        return value\n\n"
        "    def reset(self):\n"
        "        self.cache.clear()\n"
    )
    assert check_python(fragment) == CodeCheck(OK, "checked with fragment nested in if 1:")


def test_a_broken_fragment_is_still_malformed_on_its_line() -> None:
    fragment = "    def save(self):\n        self.slug = slugify(self.title\n"
    assert check_python(fragment) == CodeCheck(MALFORMED, "'(' was never closed (fragment dedented)", 2)


@pytest.mark.parametrize(
    ("code", "placeholder"),
    [
        ("from openai import OpenAI\nclient = OpenAI(api_key=<YOUR_API_KEY>)\n", "<YOUR_API_KEY>"),
        ("config = {\n    'a': 1,\n    …\n}\n", "…"),
    ],
)
def test_a_placeholder_on_the_failing_line_is_unverifiable(code: str, placeholder: str) -> None:
    result = check_python(code)
    assert result.verdict is UNVERIFIABLE
    assert repr(placeholder) in result.detail
    assert result.line == code.split("\n").index(next(line for line in code.split("\n") if placeholder in line)) + 1


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        ("x = " + "(" * 100_000 + ")" * 100_000, "too many nested parentheses"),
        ("x = " + "[" * 100_000, "too many nested parentheses"),
        ("x = " + "not " * 100_000 + "1", "MemoryError"),
        ("x = " + "+".join(["1"] * 100_000), "RecursionError"),
        ("".join(" " * i + "if 1:\n" for i in range(120)) + " " * 120 + "pass\n", "too many levels of indentation"),
        ("n = " + "7" * 5000 + "\n", "Exceeds the limit (4300 digits)"),
        ('x = f"' + "{f'" * 200 + "1" + "'}" * 200 + '"\n', "too many nested f-strings"),
    ],
    ids=["deep brackets", "deep unclosed brackets", "parser stack", "deep ast", "indentation", "digits", "f-strings"],
)
def test_a_parser_that_gives_up_is_unverifiable_never_malformed(code: str, cause: str) -> None:
    result = check_python(code)
    assert result.verdict is UNVERIFIABLE
    assert cause in result.detail
    assert result.detail.startswith("the parser gave up")


def test_a_pasted_traceback_is_unverifiable() -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "ZeroDivisionError: division by zero\n"
    )
    assert check_python(traceback) == CodeCheck(UNVERIFIABLE, "a Python traceback, not source code", 1)
    assert check_python("print(1)\n" + traceback) == CodeCheck(UNVERIFIABLE, "a Python traceback, not source code", 2)


def test_an_error_before_a_pasted_traceback_is_malformed() -> None:
    code = 'result = compute((1, 2)\nTraceback (most recent call last):\n  File "a.py", line 1\nValueError: x\n'
    assert check_python(code).verdict is MALFORMED


def test_traceback_text_inside_a_string_excuses_nothing() -> None:
    code = 'EXPECTED = """\nTraceback (most recent call last):\n  File "a.py"\n"""\nassert run() == EXPECTED[\n'
    assert check_python(code).verdict is MALFORMED


class TestExcusesStandWhereTheErrorIs:
    """Placeholders and newer grammar excuse a failure only on or next to the error, never inside a string literal."""

    @pytest.mark.parametrize(
        "code",
        [
            "NULL = '<NULL>'\nvalues = [NULL, 1\n",
            "def read(row):\n    return row.get('<NULL>', None\n",
            'msg = "fill in <your name>"\nprint(msg))\n',
            "x = 1  # <YOUR_API_KEY> goes in the env\ny = (x\n",
            "config = {'a': '…'}\nif config:\nprint(config)\n",
        ],
        ids=["in an earlier string", "in a string on the error line", "quoted", "in a comment", "ellipsis in a string"],
    )
    def test_a_placeholder_in_a_string_or_comment_excuses_nothing(self, code: str) -> None:
        assert check_python(code).verdict is MALFORMED

    def test_a_placeholder_away_from_the_error_column_excuses_nothing(self) -> None:
        code = "call(<arg>) if ok else fail(\n"
        assert check_python(code).verdict is UNVERIFIABLE  # the error is at the placeholder
        assert check_python("y = 1 +\nx = [<item>]\n").verdict is MALFORMED  # the error is on another line

    @pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14 accepts t-strings")
    def test_newer_grammar_inside_a_string_excuses_nothing(self) -> None:
        assert check_python("doc = \"write t'x' for a template\"\nprint(doc\n").verdict is MALFORMED
        assert check_python('greeting = t"hello {name}"\n').verdict is UNVERIFIABLE

    @pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14 accepts the shape")
    def test_newer_grammar_on_another_line_excuses_nothing(self) -> None:
        assert check_python("try:\n    pass\nexcept ValueError, TypeError:\n    pass\nx = (\n").verdict is UNVERIFIABLE
        assert check_python("x = (\ntry:\n    pass\nexcept ValueError, TypeError:\n    pass\n").verdict is MALFORMED


class TestStubs:
    """A header whose body is only a comment or a placeholder is a stub the model left to fill: unverifiable."""

    @pytest.mark.parametrize(
        "code",
        [
            "def solve(nums: list[int]) -> int:\n    # Your code here\n",
            "class Solution:\n    def twoSum(self, nums, target):\n        # write your solution\n",
            "def a():\n    # TODO\n\ndef b():\n    <implementation>\n\ndef c():\n    return 1\n",
            "for item in items:\n    # process each item\nprint('done')\n",
            "def solve(...):\n    # TODO\n",
        ],
        ids=["a function", "a method", "several", "a loop", "placeholder arguments"],
    )
    def test_a_stub_is_unverifiable(self, code: str) -> None:
        result = check_python(code)
        assert result.verdict is UNVERIFIABLE
        assert "stub" in result.detail or "placeholder" in result.detail

    @pytest.mark.parametrize(
        ("code", "line"),
        [
            ("def solve(x):\n    # TODO\n\nresult = solve((1)\n", 4),
            ("def solve(x):\n", 1),
            ("def solve(x):\n# not indented, not a body\nreturn x\n", 3),
        ],
        ids=["a real error beside a stub", "a header with no body at all", "code after the comment"],
    )
    def test_a_real_error_is_still_malformed(self, code: str, line: int) -> None:
        result = check_python(code)
        assert result.verdict is MALFORMED
        assert result.line == line


class TestOtherLanguages:
    """A block tagged python that is unmistakably another language is unverifiable, named."""

    @pytest.mark.parametrize(
        ("code", "language"),
        [
            ("cimport numpy as cnp\ncdef int total = 0\n", "Cython"),
            ("def f(x):\n    cdef double y = x * 2\n    return y\n", "Cython"),
            ("const total = items.reduce((a, b) => a + b, 0);\nconsole.log(total);\n", "JavaScript"),
            ("function add(a, b) {\n  return a + b;\n}\n", "JavaScript"),
            ("#include <stdio.h>\nint main(void) {\n  return 0;\n}\n", "C-family"),
            ("pip install requests\nimport requests\n", "shell"),
        ],
    )
    def test_another_language_is_unverifiable(self, code: str, language: str) -> None:
        result = check_python(code)
        assert result.verdict is UNVERIFIABLE
        assert result.detail.startswith(f"not python: {language}")

    @pytest.mark.parametrize(
        "code",
        [
            "const = 1\nx = (\n",
            "def f(x):\n    return x =>\n",
            "print('const x = 1;')\nprint(\n",
            "# function f() { in a comment\ny = [\n",
        ],
        ids=["a python name", "an arrow after a python error", "js in a string", "js in a comment"],
    )
    def test_python_with_a_lookalike_is_malformed(self, code: str) -> None:
        assert check_python(code).verdict is MALFORMED


def test_a_lone_surrogate_is_unverifiable() -> None:
    result = check_python("x = '\ud800'\n")
    assert result.verdict is UNVERIFIABLE
    assert "not valid Unicode" in result.detail


def test_syntax_warnings_do_not_leak_or_fail() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_python('path = "C:\\dir\\new"\npattern = "\\d+"\n').verdict is OK


class TestGrammar:
    def test_the_grammar_is_the_running_interpreters(self) -> None:
        assert sys.version_info[:2] == GRAMMAR

    @pytest.mark.skipif(sys.version_info < (3, 13), reason="needs the 3.13 grammar")
    @pytest.mark.parametrize(
        "code",
        [
            "type Point = tuple[float, float]\n",
            "def first[T](items: list[T]) -> T:\n    return items[0]\n",
            'names = ["a", "b"]\nprint(f"{", ".join(names)}")\n',
            'print(f"{"nested " + f"{1 + 1}"}")\n',
            "class Box[T = int]:\n    pass\n",
        ],
        ids=["pep695 type", "pep695 def", "pep701 quotes", "pep701 nesting", "pep696 default"],
    )
    def test_newer_syntax_parses_on_this_interpreter(self, code: str) -> None:
        assert check_python(code).verdict is OK

    @pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14 accepts these")
    @pytest.mark.parametrize(
        ("code", "feature"),
        [
            ('name = "world"\ngreeting = t"hello {name}"\n', "PEP 750"),
            ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", "PEP 758"),
        ],
    )
    def test_syntax_of_a_newer_python_is_unverifiable_not_malformed(self, code: str, feature: str) -> None:
        result = check_python(code)
        assert result.verdict is UNVERIFIABLE
        assert feature in result.detail
        assert "3.14" in result.detail

    def test_python2_print_is_still_malformed(self) -> None:
        assert check_python('print "hello"\n').verdict is MALFORMED

    @pytest.mark.parametrize(
        ("line", "running", "pep"),
        [
            ("type Point = tuple[float, float]", (3, 11), "695"),
            ("def first[T](items: list[T]) -> T:", (3, 11), "695"),
            ('print(f"{", ".join(names)}")', (3, 11), "701"),
            ("class Box[T = int]:", (3, 12), "696"),
            ('t"hello {name}"', (3, 13), "750"),
            ("except ValueError, TypeError:", (3, 13), "758"),
            ("lazy import json", (3, 14), "810"),
            ("flat = [*chunk for chunk in chunks]", (3, 14), "798"),
        ],
    )
    def test_the_table_recognises_each_feature_below_its_version(
        self, line: str, running: tuple[int, int], pep: str
    ) -> None:
        feature = newer_grammar_feature(line, running)
        assert feature is not None
        assert pep in feature.name
        assert newer_grammar_feature(line, feature.since) is None

    def test_ordinary_lines_match_no_feature(self) -> None:
        for line in ("x = 1", "typed = True", "def f(x):", "except (A, B):", "print(fr)", "t = 1"):
            assert newer_grammar_feature(line, (3, 11)) is None, line

    def test_the_table_is_ordered_by_version(self) -> None:
        assert [f.since for f in NEWER_GRAMMAR] == sorted(f.since for f in NEWER_GRAMMAR)


def _python_311() -> str | None:
    candidates = [shutil.which("python3.11"), *sorted(Path.home().glob(".pyenv/versions/3.11*/bin/python3"))]
    return next((str(c) for c in candidates if c), None)


@pytest.mark.skipif(_python_311() is None, reason="no Python 3.11 on this machine")
def test_on_python_311_newer_grammar_is_unverifiable_and_real_errors_stay_malformed() -> None:
    script = (
        "from verdict.verify.python_syntax import check_python\n"
        "print(check_python('type Point = tuple[float, float]\\n').verdict)\n"
        'print(check_python(\'print(f"{", ".join(names)}")\\n\').verdict)\n'
        "print(check_python('def f(:\\n    pass\\n').verdict)\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(SERVICE)}
    python = _python_311()
    assert python is not None
    completed = subprocess.run([python, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert completed.stdout.split() == ["unverifiable", "unverifiable", "malformed"]


class TestSessionsInsideCode:
    """`>>>` lines in a docstring are ordinary code: an error elsewhere is malformed, never excused as a session."""

    @pytest.mark.parametrize(
        "code",
        [
            'def double(x):\n    """Double x.\n\n    >>> double(2)\n    4\n    """\n    return (x * 2\n',
            'def double(x):\n    """Double x.\n\n    >>> double(2)\n',
            'EXAMPLE = """\n>>> 1 + 1\n2\n"""\nprint(EXAMPLE\n',
        ],
        ids=["unclosed bracket after the docstring", "cut inside the docstring", "prompts in a string constant"],
    )
    def test_broken_code_around_doctest_examples_is_malformed(self, code: str) -> None:
        result = check_python(code)
        assert result.verdict is MALFORMED
        assert "session" not in result.detail

    def test_prompts_right_after_code_that_fails_there_are_still_unverifiable(self) -> None:
        result = check_python("import json\n>>> json.dumps({})\n'{}'\n")
        assert result.verdict is UNVERIFIABLE
        assert "prompts after code" in result.detail

    def test_a_session_opened_by_comments_or_a_shell_prompt_is_still_a_session(self) -> None:
        assert check_python("# try it:\n$ python3\n>>> x = 1\n>>> x\n1\n").verdict is OK

    def test_intact_code_with_doctest_examples_parses_as_code(self) -> None:
        code = 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x * 2\n'
        assert check_python(code) == CodeCheck(OK)


class TestMagicsInSessions:
    """IPython sessions put magics after the prompt; no Python statement starts with `%` or `!` (a false malformed)."""

    def test_a_line_magic_after_a_prompt_is_dropped(self) -> None:
        session = "In [1]: %timeit sum(range(10))\n180 ns ± 1 ns per loop\n\nIn [2]: x = [1, 2]\n\nIn [3]: len(x)\n"
        assert check_python(session) == CodeCheck(OK, "checked with 2 session example(s), prompts removed")

    def test_a_shell_escape_after_a_doctest_prompt_is_dropped(self) -> None:
        assert check_python(">>> !pip install orjson\n>>> import orjson\n").verdict is OK

    def test_a_timing_cell_magic_keeps_its_cell_checked(self) -> None:
        session = "In [1]: %%time\n   ...: total = sum(\n   ...:     range(10)\n\nIn [2]: total\n"
        assert check_python(session) == CodeCheck(MALFORMED, "'(' was never closed (session prompts removed)", 2)

    def test_a_session_of_nothing_but_other_languages_is_unverifiable(self) -> None:
        result = check_python("In [1]: %%bash\n   ...: ls -la\n\nIn [2]: !pwd\n")
        assert result.verdict is UNVERIFIABLE
        assert "no Python left" in result.detail


@pytest.mark.skipif(sys.version_info >= (3, 15), reason="3.15 accepts these")
@pytest.mark.parametrize(
    ("code", "feature"),
    [
        ("lazy import json\nlazy from pathlib import Path\n", "PEP 810"),
        ("chunks = [[1], [2, 3]]\nflat = [*chunk for chunk in chunks]\n", "PEP 798"),
        ("merged = {**d for d in ({'a': 1}, {'b': 2})}\n", "PEP 798"),
    ],
    ids=["lazy import", "list unpacking", "dict unpacking"],
)
def test_python_315_syntax_is_unverifiable_not_malformed(code: str, feature: str) -> None:
    """Python 3.15 (October 2026) added grammar; a 3.13 server must not call it malformed."""
    result = check_python(code)
    assert result.verdict is UNVERIFIABLE
    assert feature in result.detail
    assert "3.15" in result.detail


@pytest.mark.parametrize(
    "code",
    ["lazy = True\nlazy(\n", "values = [f(*args) for args in pairs\n", "import lazy\nlazy.x = (\n"],
)
def test_ordinary_errors_near_315_lookalikes_stay_malformed(code: str) -> None:
    assert check_python(code).verdict is MALFORMED


class TestElisions:
    """`...` standing for omitted entries of a literal is an excerpt where the parser failed, and only there."""

    @pytest.mark.parametrize(
        "code",
        [
            'config = {\n    "name": "x",\n    "debug": True,\n    ...\n}\n',
            'd = {"a": 1, "b": 2, ...}\n',
        ],
    )
    def test_an_elision_at_the_error_is_unverifiable(self, code: str) -> None:
        result = check_python(code)
        assert result.verdict is Verdict.UNVERIFIABLE
        assert "placeholder '...'" in result.detail

    def test_an_elision_never_excuses_a_bracket_error(self) -> None:
        assert check_python('d = {"a": 1, "b": (2, ...}\n').verdict is Verdict.MALFORMED

    def test_an_elision_elsewhere_does_not_excuse_the_error(self) -> None:
        """`[1, 2, ...]` is a list holding Ellipsis (valid), so the error two lines down is the parser's only one."""
        assert check_python("items = [1, 2, ...]\n\nif x\n    pass\n").verdict is Verdict.MALFORMED
