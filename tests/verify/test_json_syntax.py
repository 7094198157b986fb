"""JSON blocks: strict RFC 8259, with the leniencies real documentation needs."""

from __future__ import annotations

import pytest

from verdict.verify.json_syntax import check_json
from verdict.verify.model import CodeCheck, Verdict

OK, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.MALFORMED, Verdict.UNVERIFIABLE

PACKAGE_JSON = """{
  "name": "verdict-client",
  "version": "0.1.0",
  "scripts": {"test": "vitest run", "build": "tsc -p ."},
  "dependencies": {"@grpc/grpc-js": "^1.12.0"}
}
"""


def test_a_real_document_parses() -> None:
    assert check_json(PACKAGE_JSON) == CodeCheck(OK)


@pytest.mark.parametrize(
    ("code", "message", "line"),
    [
        ('{\n  "a": 1,\n  "b": 2,\n}\n', "Illegal trailing comma before end of object (column 9)", 3),
        ('{\n  "a": 1\n  "b": 2\n}\n', "Expecting ',' delimiter (column 3)", 3),
        ("{'a': 1}", "Expecting property name enclosed in double quotes (column 2)", 1),
        ('{"url": "https://example.com"', "Expecting ',' delimiter (column 30)", 1),
        ("[1, 2]\n[3, ", "Expecting value (column 5)", 2),
    ],
)
def test_syntax_errors_are_malformed_with_the_parsers_words_and_line(code: str, message: str, line: int) -> None:
    assert check_json(code) == CodeCheck(MALFORMED, message, line)


def test_jsonc_comments_are_unverifiable() -> None:
    tsconfig = '{\n  "compilerOptions": {\n    // emit ES2022\n    "target": "ES2022"\n  }\n}\n'
    assert check_json(tsconfig) == CodeCheck(UNVERIFIABLE, "JSON with comments (JSONC) is not strict JSON", 3)
    assert check_json('{"a": 1 /* one */}').verdict is UNVERIFIABLE


def test_comment_markers_inside_strings_do_not_count() -> None:
    assert check_json('{"url": "https://example.com/*"}').verdict is OK
    assert check_json('{"url": "https://example.com", }').verdict is MALFORMED


@pytest.mark.parametrize("code", ['{"items": [1, 2, ...]}', '{\n  "a": 1,\n  …\n}'])
def test_elision_placeholders_are_unverifiable(code: str) -> None:
    result = check_json(code)
    assert result.verdict is UNVERIFIABLE
    assert "placeholder" in result.detail


def test_an_ellipsis_inside_a_string_is_data() -> None:
    assert check_json('{"text": "to be continued..."}').verdict is OK


def test_a_key_value_fragment_is_checked_wrapped_in_braces() -> None:
    fragment = '"editor.formatOnSave": true,\n"editor.tabSize": 2,\n'
    assert check_json(fragment) == CodeCheck(OK, 'a "key": value fragment, checked wrapped in {}')


def test_a_broken_fragment_is_malformed_on_its_line() -> None:
    assert check_json('"a": 1,\n"b": [2,\n"c": 3') == CodeCheck(MALFORMED, "Expecting ',' delimiter (column 4)", 3)


def test_json_lines_and_concatenated_documents_parse_value_by_value() -> None:
    lines = '{"id": 1, "ok": true}\n{"id": 2, "ok": false}\n\n{"id": 3, "ok": true}\n'
    assert check_json(lines) == CodeCheck(OK, "3 JSON values in sequence (JSON Lines)")
    assert check_json('{\n  "request": 1\n}\n{\n  "response": 2\n}\n').verdict is OK


def test_a_broken_json_line_is_malformed_on_its_line() -> None:
    assert check_json('{"id": 1}\n{"id": 2,}\n') == CodeCheck(
        MALFORMED, "Illegal trailing comma before end of object (column 9)", 2
    )


@pytest.mark.parametrize(
    ("code", "line"), [('{"a": NaN}', 1), ('{"s": "NaN",\n "x": -Infinity}', 2), ("[Infinity]", 1)]
)
def test_nan_and_infinity_are_malformed(code: str, line: int) -> None:
    result = check_json(code)
    assert result.verdict is MALFORMED
    assert "RFC 8259" in result.detail
    assert result.line == line


def test_duplicate_keys_are_accepted() -> None:
    assert check_json('{"a": 1, "a": 2}') == CodeCheck(OK)


@pytest.mark.parametrize(
    ("code", "cause"),
    [("[" * 100_000 + "]" * 100_000, "RecursionError"), ("7" * 5000, "Exceeds the limit (4300 digits)")],
)
def test_a_parser_that_gives_up_is_unverifiable(code: str, cause: str) -> None:
    result = check_json(code)
    assert result.verdict is UNVERIFIABLE
    assert cause in result.detail


def test_a_megabyte_line_parses() -> None:
    assert check_json('{"blob": "' + "a" * 1_000_000 + '"}').verdict is OK


def test_json_lines_of_strings_are_a_sequence_not_a_broken_fragment() -> None:
    """A block that opens with a string was only ever read as a `"key": value` fragment (a false malformed)."""
    assert check_json('"first event"\n"second event"\n') == CodeCheck(OK, "2 JSON values in sequence (JSON Lines)")
    assert check_json('"a"\n{"b": 1}\n').verdict is OK


def test_a_broken_fragment_still_reports_the_fragments_error() -> None:
    assert check_json('"name": "verdict",\n"port": ,\n') == CodeCheck(MALFORMED, "Expecting value (column 9)", 2)


def test_a_fragment_error_on_its_first_line_names_the_blocks_column() -> None:
    """The `{` added around a fragment shifted every first-line column by one."""
    assert check_json('"port": ,\n"host": "a"\n') == CodeCheck(MALFORMED, "Expecting value (column 9)", 1)


@pytest.mark.parametrize(
    "code",
    [
        '{\n  "a": [1, 2},\n  // the rest\n  "b": 2\n}\n',
        '{"items": [1 2], "more": [...]}',
        '{"a": "// not a comment", "b": }',
        '{"a": 1,, "b": "…"}',
    ],
    ids=["a bracket before a comment", "an error before a placeholder", "a marker in a string", "ellipsis in a string"],
)
def test_a_comment_or_placeholder_away_from_the_error_excuses_nothing(code: str) -> None:
    assert check_json(code).verdict is MALFORMED


def test_a_comment_after_a_complete_value_is_still_jsonc() -> None:
    assert check_json('{"a": 1}\n// a note for the reader\n').verdict is UNVERIFIABLE


class TestExcerpts:
    """A member list without its braces, with `...` lines for what was left out, is an excerpt at the `...`."""

    def test_a_member_list_with_an_elision_is_unverifiable(self) -> None:
        result = check_json('"require": {\n    "php": ">=8.1",\n    ...\n}\n')
        assert result.verdict is Verdict.UNVERIFIABLE
        assert "placeholder '...'" in result.detail

    def test_a_member_list_broken_before_the_elision_is_malformed(self) -> None:
        assert check_json('"require": {\n    "php" ">=8.1",\n    ...\n}\n').verdict is Verdict.MALFORMED

    def test_a_member_list_without_an_elision_is_still_checked(self) -> None:
        assert check_json('"a": 1,\n"b": 2\n').verdict is Verdict.OK
        assert check_json('"a": {\n  "b": 1\n').verdict is Verdict.MALFORMED
