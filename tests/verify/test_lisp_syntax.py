"""The Lisp family: balanced forms of each dialect's shapes are ok, a lost or wrong bracket and an endless string are
malformed, brackets hidden in strings, comments and character literals never count, hostile input is linear."""

from __future__ import annotations

import pytest

from verdict.verify.lisp_syntax import check_lisp
from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline

INTACT = [
    '(define (greet name)\n  (string-append "Hello, (" name ")"))\n',  # Scheme, brackets in a string
    "(define (f c)\n  (if (char=? c #\\() 'open 'other))\n",  # a Scheme character literal
    "(defun f (x) ; a comment with (\n  (list ?\\( x))\n",  # Emacs Lisp
    "(defn f [x]\n  {:open \\( :set #{1 2} :fn #(inc %)})\n",  # Clojure
    '#| a block comment ( #| nested |# |#\n(format t "~a~%" 42)\n',  # Common Lisp
    "(let loop ([i 0])\n  (when (< i 3)\n    (loop (add1 i))))\n",  # Racket square brackets
]

BROKEN = [
    ("(define (f x)\n  (+ x 1)\n", "'(' was never closed", 1),
    ('(display "unterminated)\n', "a string that never ends", 1),
    ("(a))\n", "unmatched ')'", 1),
    ("(let ([x 1)\n  x)\n", "its own closer is missing", 1),
]


@pytest.mark.parametrize("code", INTACT)
def test_balanced_forms_are_ok(code: str) -> None:
    assert check_lisp(code).verdict is Verdict.OK, check_lisp(code)


@pytest.mark.parametrize(("code", "detail", "line"), BROKEN)
def test_a_lost_bracket_or_string_end_is_malformed(code: str, detail: str, line: int) -> None:
    result = check_lisp(code)
    assert (result.verdict, result.line) == (Verdict.MALFORMED, line)
    assert detail in result.detail


@pytest.mark.parametrize("tag", ["scheme", "racket", "clojure", "elisp", "common-lisp"])
def test_every_dialect_word_reaches_the_checker(tag: str) -> None:
    result = verify_offline(f"Here:\n\n```{tag}\n(f (g x)\n```\n")
    assert (result.verdict, result.checks[0].language) == (Verdict.MALFORMED, tag)


def test_hostile_input_is_linear() -> None:
    assert check_lisp("(" * 200_000 + ")" * 200_000).verdict is Verdict.OK
    assert check_lisp("(" * 200_000).verdict is Verdict.MALFORMED
    assert check_lisp('"' + "\\\\" * 100_000).verdict is Verdict.MALFORMED
    assert check_lisp("(a\x00)").verdict is Verdict.MALFORMED
