"""Unterminated strings and colonless CSS declarations, found lexically: caught, and the look-alikes left alone."""

from __future__ import annotations

import time

import pytest

from verdict.verify.css_declarations import colonless_declaration
from verdict.verify.literals import unterminated
from verdict.verify.model import Verdict
from verdict.verify.tree_syntax import check_tree

BROKEN = [
    ("rust", 'fn main() {\n    let a = "one;\n    let b = "two";\n    println!("{a} {b}");\n}\n'),
    ("go", 'func f() string {\n\tx := fmt.Sprintf("%d, n)\n\treturn x + "!"\n}\n'),
    ("java", 'void f() {\n    log.info("start);\n    run();\n}\n'),
    ("cpp", 'int main() {\n  std::string s = "abc;\n  return s.size();\n}\n'),
    ("c", 'int main(void) {\n    puts("hello);\n    return 0;\n}\n'),
    ("typescript", "export function f(): string {\n  const s = 'a;\n  return s + 'b';\n}\n"),
    ("javascript", 'function f() {\n  return "x + y;\n}\nf();\n'),
]

INTACT = [
    ("rust", "fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n    if x.len() > y.len() { x } else { y }\n}\n"),
    ("rust", "let c = '\"';\nlet q = b'\\'';\nlet u = '\\u{1F600}';\n'outer: loop { break 'outer; }\n"),
    ("rust", 'let raw = r#"a "quoted" word"#;\nlet bytes = br"\\d+";\nlet s = "two\nlines";\n'),
    ("go", "var q = '\"'\nvar raw = `a \"raw\"\nstring`\nvar r = '\\u1234'\n"),
    ("java", 'String t = """\n    a "quoted" text block\n    """;\nchar c = \'"\';\n'),
    ("cpp", 'auto r = R"x(a "raw" ) string)x";\nint n = 1\'000\'000;\nchar q = \'"\';\n'),
    ("c", '#define LONG "a line \\\n  continued"\n/* a "comment */ int x; // don\'t\n'),
    ("javascript", 'const t = `a ${cond ? "x" : `inner ${y}`} b`;\nconst re = /["\']/g;\nconst d = a / b / c;\n'),
    ("typescript", "type Mode = 'on' | 'off';\nconst s = `${a}'${b}\"`;\n"),
]


@pytest.mark.parametrize(("language", "code"), BROKEN)
def test_a_lost_closing_quote_is_an_unterminated_string(language: str, code: str) -> None:
    found = unterminated(language, code)
    assert found is not None
    assert found.line == 2
    result = check_tree(language, code)
    assert result.verdict is Verdict.MALFORMED
    assert "unterminated string" in result.detail


@pytest.mark.parametrize(("language", "code"), INTACT)
def test_strings_that_only_look_open_are_not_unterminated(language: str, code: str) -> None:
    assert unterminated(language, code) is None


def test_a_rust_string_that_swallowed_the_rest_is_unterminated_at_the_end() -> None:
    found = unterminated("rust", 'let a = "x;\nlet b = 1;\n')
    assert found is not None
    assert not found.at_line_end


def test_an_apostrophe_in_jsx_text_is_not_charged_when_the_grammar_stumbles_above_it() -> None:
    code = "@@@ unknown syntax @@@\nconst A = () => <p>Don't go</p>;\n"
    assert check_tree("typescript", code).verdict is not Verdict.MALFORMED


@pytest.mark.parametrize(
    "code",
    [
        ".lime {color lime;}\n",
        "a {\n  color: red;\n  font-weight bold\n}\n",
        "div { position: absolute; right 0; }\n",
        ".x {\n  display -ms-flexbox;\n}\n",
    ],
)
def test_a_declaration_without_its_colon_is_found(code: str) -> None:
    assert colonless_declaration(code)
    assert check_tree("css", code).verdict is Verdict.MALFORMED


@pytest.mark.parametrize(
    "code",
    [
        "a:hover, a:focus { color: red; }\n",
        "@media (max-width: 600px) {\n  .a:not(.b) > li::before { content: 'x y'; }\n}\n",
        ".card {\n  &:hover { color: blue; }\n  .title span { margin: 0 }\n}\n",
        "@font-face { font-family: X; src: url(data:font/woff2;base64,AAAA) }\n",
        "/* color red; */ a { b: c }\n",
        ".x { @apply font-bold py-2; }\n",
    ],
)
def test_selectors_and_at_rules_are_not_colonless_declarations(code: str) -> None:
    assert colonless_declaration(code) == 0


@pytest.mark.parametrize("language", ["rust", "cpp", "javascript", "go", "java"])
def test_hostile_input_stays_linear(language: str) -> None:
    def seconds(size: int) -> float:
        code = ('"\\' + "'" + "`${" + "/*" + "r#" + '"') * size
        started = time.perf_counter()
        unterminated(language, code)
        colonless_declaration("{" + "a b;" * size)
        return time.perf_counter() - started

    small = min(seconds(2_000) for _ in range(3))
    large = min(seconds(20_000) for _ in range(3))
    assert large < small * 10 * 8 + 0.05


MACRO_INTACT = [
    "namespace std _GLIBCXX_VISIBILITY(default)\n{\n_GLIBCXX_BEGIN_NAMESPACE_VERSION\n"
    "  class bad_exception : public exception\n  {\n  public:\n    bad_exception() _GLIBCXX_USE_NOEXCEPT { }\n  };\n"
    "_GLIBCXX_END_NAMESPACE_VERSION\n}\n",
    "#ifndef _X_H\n#define _X_H 1\nclass Widget {\npublic:\n  int size() const _GLIBCXX_NOEXCEPT;\n};\n#endif\n",
]


@pytest.mark.parametrize("code", MACRO_INTACT)
def test_macro_shaped_names_the_grammar_cannot_expand_are_read_around(code: str) -> None:
    assert check_tree("cpp", code).verdict is Verdict.OK


@pytest.mark.parametrize(
    "code",
    [
        "namespace std _GLIBCXX_VISIBILITY(default)\n{\n  int f() _GLIBCXX_NOEXCEPT {\n    return 1;\n}\n",
        "namespace std _GLIBCXX_VISIBILITY(default)\n{\n  int f() _GLIBCXX_NOEXCEPT { return g(1, 2; }\n}\n",
    ],
)
def test_a_lost_closer_beside_a_macro_is_still_malformed(code: str) -> None:
    assert check_tree("cpp", code).verdict is Verdict.MALFORMED
