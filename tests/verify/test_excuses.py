"""Where an excuse may apply: string blanking keeps columns, proximity, and other-language markers both ways."""

from __future__ import annotations

import pytest

from verdict.verify.excuses import blank_python_strings, blank_quoted, near, other_language


def test_blanking_keeps_columns_quotes_and_prefixes() -> None:
    line = """x = f"<a>" + '<b>'  # <c>"""
    blanked = blank_python_strings(line)
    assert len(blanked) == len(line)
    assert blanked.startswith("x = f\"   \" + '   '")
    assert "<" not in blanked
    quoted = "a: \"{{ x }}\" and 'it''s {{ y }}' {{ z }}"
    assert blank_quoted(quoted) == 'a: "       " and \'' + " " * 13 + "' {{ z }}"


def test_near_is_two_columns_either_side_and_anything_without_a_column() -> None:
    assert near(10, 14, 8)
    assert near(10, 14, 16)
    assert not near(10, 14, 7)
    assert not near(10, 14, 17)
    assert near(10, 14, -1)


@pytest.mark.parametrize(
    ("line", "host", "language"),
    [
        ("cpdef double area(double r):", "python", "Cython"),
        ("let total = items.length;", "python", "JavaScript"),
        ("public static void main(String[] args) {", "python", "C-family"),
        ("npm install --save-dev jest", "python", "shell"),
        ("class Config(BaseModel):", "shell", "Python"),
        ("$env:PATH += ';C:\\tools'", "shell", "PowerShell"),
    ],
)
def test_markers_of_other_languages(line: str, host: str, language: str) -> None:
    found = other_language(line, host)
    assert found is not None
    assert found.language == language


@pytest.mark.parametrize(
    ("line", "host"),
    [
        ("total = sum(items)", "python"),
        ("const_value = 3", "python"),
        ("print('let x = 1;')", "python"),
        ("result = compute()  # like console.log(x)", "python"),
        ('echo "def main():"', "shell"),
        ('for f in *.txt; do gzip "$f"; done', "shell"),
    ],
)
def test_no_marker_in_the_hosts_own_code_strings_or_comments(line: str, host: str) -> None:
    assert other_language(line, host) is None
