"""HTML as a browser's tree builder reads it: what browsers repair is not charged, what a cut or a lost end tag
leaves is."""

from __future__ import annotations

import pytest

from verdict.verify.html_syntax import check_html
from verdict.verify.model import Verdict

INTACT = [
    '<div class="card">\n  <h2>Title</h2>\n  <p>Text\n  <ul><li>a<li>b</ul>\n</div>\n',
    "<!DOCTYPE html>\n<html>\n<head><title>x</title></head>\n<body><p>hi<br><img src=a.png></body>\n</html>\n",
    "<table><tr><td>a<td>b</table>\n",
    '<button onclick="go()">Go</button>\n<style>.a { color: red }</style>\n<script>if (a < b) { go(); }</script>\n',
    '<svg viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></svg>\n<div/>\n',
    "<template>\n  <div>{{ message }}</div>\n</template>\n",
]

BROKEN = [
    ("<div>\n  <div>x\n</div>\n", "never closed"),
    ('<div class="a>x</div>\n', "stops inside"),
    ("<script>\nconst a = 1;\n", "never closed"),
    ("<!DOCTYPE html>\n<html><body><div><span>x</span>\n<p>y</p>\n</body></html>\n", "<div> is never closed"),
    ("<!DOCTYPE html>\n<html>\n<head><title>x</title></head>\n<body>\n<p>cut here\n", "</html>"),
    ("<section>\n<div><span>x</div>\n</section>\n", "<span> is opened 1 times"),
]


@pytest.mark.parametrize("code", INTACT)
def test_intact_html_is_ok(code: str) -> None:
    assert check_html(code).verdict is Verdict.OK, check_html(code)


@pytest.mark.parametrize(("code", "detail"), BROKEN)
def test_unclosed_elements_and_cuts_are_malformed(code: str, detail: str) -> None:
    result = check_html(code)
    assert result.verdict is Verdict.MALFORMED, result
    assert detail in result.detail


def test_a_misnesting_the_counts_agree_on_is_unverifiable_not_charged() -> None:
    result = check_html("<p><b><i>x</b></i></p>\n")
    assert result.verdict is Verdict.UNVERIFIABLE
    assert "a browser repairs" in result.detail


def test_text_without_tags_is_unverifiable() -> None:
    assert check_html("just words\n").verdict is Verdict.UNVERIFIABLE


def test_hostile_input_gets_a_verdict() -> None:
    assert check_html("<div>" * 20_000).verdict is Verdict.UNVERIFIABLE  # past MAX_DEPTH: linear count only
    assert check_html("<div>" * 5_000 + "</div>" * 5_000).verdict is Verdict.UNVERIFIABLE
    assert check_html("<div>" * 400 + "</div>" * 400).verdict is Verdict.OK
    assert check_html("<div>" * 400 + "</div>" * 399).verdict is Verdict.MALFORMED
    assert check_html("<br>" * 20_000).verdict is Verdict.OK
    assert check_html("<a\x00>").verdict is Verdict.MALFORMED


def test_hostile_comments_and_scripts_stay_linear() -> None:
    """Unclosed comments and scripts repeated: each is searched for its end once (a lazy regex would rescan)."""
    assert check_html("<div>" + "<!--" * 50_000).verdict is Verdict.MALFORMED
    assert check_html("<div><b></div>" + "<script>" * 50_000).verdict is not Verdict.OK
    assert check_html("<section><div><span>x</div></section><!-- ( --><script>if (a<b) {}</script>").verdict is (
        Verdict.MALFORMED
    )
