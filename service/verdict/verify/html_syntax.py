"""HTML as a browser's tree builder reads it (html5lib, the WHATWG parsing algorithm), after a C-speed first look.

HTML forgives by design: `<p>` and `<li>` close themselves, a stray `</span>` is dropped, misnested `<b><i></b></i>`
is repaired. Real, intact pages are full of what the standard calls parse errors (measured on 300 HTML documents of
installed packages: stray end tags in 32, misnesting in 21, doctype complaints in most), so "the parser complained"
would be a false alarm. Two kinds never appeared in that intact material and are what a cut or a lost end tag leaves:

- **an element still open at the end** (`expected-closing-tag-but-got-eof`): a `<div>`, `<table>`, `<script>`...
  whose end tag never came (elements whose end tag is optional, such as `<p>`, `<li>`, `<body>`, are not reported);
- **the text stops inside a tag, an attribute value or a comment** (`eof-in-...`);
- **a required element still open when `</body>` or `</html>` comes**, or, where the browser had to repair the
  nesting, **an element opened more often than closed** (a misnesting the author meant keeps the counts equal);
- **a whole document (doctype or `<html>` first) without its `</html>`**: a document that was cut.

Those are malformed. Misnesting and stray end tags are unverifiable (a browser repairs them; the author may or may
not have meant it), and everything else is ok. A fragment (the usual answer: a few elements, no `<html>`) is parsed
as the content of a `<body>`, a document (a doctype or `<html>` first) as a document.

html5lib is pure Python; tree-sitter-html reads the same text at C speed first, and when it sees every element
closed (or implicitly closable) and no error, the browser's algorithm has nothing to report of the two kinds above,
so html5lib runs only on the blocks that may hold one.
"""

from __future__ import annotations

import functools
import re

import html5lib  # type: ignore[import-untyped]
import tree_sitter
import tree_sitter_html

from verdict.verify.model import CodeCheck, Verdict

__all__ = ["MAX_DEPTH", "check_html"]

_VOID = frozenset(
    (
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "basefont",
        "bgsound",
        "frame",
        "keygen",
    )
)
_OPTIONAL_END = frozenset(
    (
        "html",
        "head",
        "body",
        "p",
        "li",
        "dt",
        "dd",
        "option",
        "optgroup",
        "rt",
        "rp",
        "tr",
        "td",
        "th",
        "tbody",
        "thead",
        "tfoot",
        "colgroup",
        "caption",
    )
)
_CLOSED_ELEMENTS = frozenset(
    (
        "a",
        "abbr",
        "article",
        "aside",
        "audio",
        "b",
        "blockquote",
        "button",
        "canvas",
        "cite",
        "code",
        "del",
        "details",
        "dfn",
        "dialog",
        "div",
        "dl",
        "em",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "i",
        "iframe",
        "ins",
        "kbd",
        "label",
        "legend",
        "main",
        "mark",
        "nav",
        "noscript",
        "object",
        "ol",
        "picture",
        "pre",
        "q",
        "s",
        "samp",
        "script",
        "section",
        "select",
        "small",
        "span",
        "strong",
        "style",
        "sub",
        "summary",
        "sup",
        "svg",
        "table",
        "template",
        "textarea",
        "time",
        "title",
        "u",
        "ul",
        "var",
        "video",
    )
)
"""HTML elements whose end tag is required: only these are counted (an unknown `<pi>` in prose is no element)."""
_SELF_CLOSING = re.compile(r"<([A-Za-z][\w-]*)(\b[^<>]*?)/>")
_EOF_KINDS = ("expected-closing-tag-but-got-eof", "expected-named-closing-tag-but-got-eof", "eof-in-")
_REPAIRED = frozenset(
    {
        "unexpected-end-tag",
        "end-tag-too-early",
        "end-tag-too-early-named",
        "expected-one-end-tag-but-got-another",
        "adoption-agency-1.1",
        "adoption-agency-1.2",
        "adoption-agency-1.3",
        "adoption-agency-4.4",
        "unexpected-end-tag-treated-as",
    }
)
_DOCUMENT = re.compile(r"\A\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype|html[\s>])", re.IGNORECASE | re.DOTALL)
_HTML_START = re.compile(r"<html[\s>]", re.IGNORECASE)
_HTML_END = re.compile(r"</html\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[A-Za-z!/]")


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_html.language()))


def check_html(code: str) -> CodeCheck:
    """The verdict on an HTML document or fragment."""
    if "\x00" in code:
        return CodeCheck(Verdict.MALFORMED, "a NUL byte in HTML", 0)
    if not _TAG.search(code):
        return CodeCheck(Verdict.UNVERIFIABLE, "no HTML tag in the block")
    if _deeper_than(code, MAX_DEPTH):
        return CodeCheck(
            Verdict.UNVERIFIABLE, f"nested deeper than {MAX_DEPTH} elements: too deep for the tree builders here"
        )
    document = _DOCUMENT.match(code) is not None
    if document and _HTML_START.search(code) and not _HTML_END.search(code):
        # A whole document (doctype or <html> first) always ends with </html>; one that does not was cut.
        return CodeCheck(Verdict.MALFORMED, "the document stops before its </html>", code.rstrip().count("\n") + 1)
    if not _may_be_broken(code):
        return CodeCheck(Verdict.OK)
    # `<div/>` (XHTML, JSX habits) means an element closed on the spot; the HTML algorithm would leave it open.
    code = _SELF_CLOSING.sub(_close_on_the_spot, code)
    parser = html5lib.HTMLParser(namespaceHTMLElements=False)
    if document:
        parser.parse(code)
    else:
        parser.parseFragment(code, container="body")
    repaired = None
    for (line, _column), kind, details in parser.errors:
        if kind.startswith(_EOF_KINDS):
            name = details.get("name") if isinstance(details, dict) else None
            if "closing-tag" in kind:
                return CodeCheck(Verdict.MALFORMED, f"{f'<{name}>' if name else 'an element'} is never closed", line)
            return CodeCheck(Verdict.MALFORMED, f"the HTML stops inside a tag or comment ({kind})", line)
        if kind == "expected-one-end-tag-but-got-another" and isinstance(details, dict):
            expected = str(details.get("expectedName", ""))
            if details.get("gotName") in ("body", "html") and expected in _CLOSED_ELEMENTS:
                return CodeCheck(
                    Verdict.MALFORMED, f"<{expected}> is never closed (</{details['gotName']}> came)", line
                )
        if kind in _REPAIRED and repaired is None:
            repaired = (line, kind)
    if repaired is not None:
        line, kind = repaired
        unclosed = _opened_more_than_closed(code)
        if unclosed:
            name, opened, closed = unclosed
            return CodeCheck(
                Verdict.MALFORMED,
                f"<{name}> is opened {opened} times and closed {closed} times; a browser closes it at line {line}",
                line,
            )
        return CodeCheck(
            Verdict.UNVERIFIABLE, f"a browser repairs line {line} ({kind}): misnested or stray end tags", line
        )
    return CodeCheck(Verdict.OK)


MAX_DEPTH = 512
"""Deeper nesting is unverifiable: real pages nest a few dozen elements deep; hostile ones cost quadratic time."""
_HIDING = re.compile(r"<!--|<(script|style|textarea|pre)\b", re.IGNORECASE)


def _visible(code: str) -> str:
    """`code` without its comments and the content of script, style, textarea and pre elements. Linear: each hiding
    element is searched for its end once, and an unclosed one hides the rest."""
    pieces = []
    position = 0
    lowered = code.lower()
    while (found := _HIDING.search(code, position)) is not None:
        pieces.append(code[position : found.start()])
        name = found.group(1)
        end = lowered.find("-->" if name is None else f"</{name.lower()}", found.end())
        if end < 0:
            return "".join(pieces)
        position = end + 3 if name is None else end
        if name is not None:
            position = lowered.find(">", end)
            position = len(code) if position < 0 else position + 1
    pieces.append(code[position:])
    return "".join(pieces)


_START_OR_END = re.compile(r"<(/?)([A-Za-z][\w-]*)\b[^<>]*?(/?)>")


def _opened_more_than_closed(code: str) -> tuple[str, int, int] | None:
    """The first element name (end tag not optional, not void) with more start tags than end tags, outside comments,
    scripts and styles: what a lost end tag leaves, where a misnesting the author meant keeps the counts equal."""
    counts: dict[str, list[int]] = {}
    for match in _START_OR_END.finditer(_visible(code)):
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if name not in _CLOSED_ELEMENTS or self_closing:
            continue
        counts.setdefault(name, [0, 0])[1 if closing else 0] += 1
    for name, (opened, closed) in counts.items():
        if opened > closed:
            return name, opened, closed
    return None


def _deeper_than(code: str, limit: int) -> bool:
    """Whether start tags (void ones aside) ever stand `limit` deeper than their end tags: a linear count. Both tree
    builders slow down with the square of the depth (html5lib scans its stack of open elements for every tag)."""
    depth = 0
    for match in _START_OR_END.finditer(code):
        if match.group(1):
            depth -= 1
        elif match.group(2).lower() not in _VOID and not match.group(3):
            depth += 1
            if depth > limit:
                return True
    return False


def _close_on_the_spot(match: re.Match[str]) -> str:
    name = match.group(1)
    return match.group(0) if name.lower() in _VOID else f"<{name}{match.group(2)}></{name}>"


def _may_be_broken(code: str) -> bool:
    """Whether tree-sitter-html sees an error or an element left open whose end tag is not optional.

    A comment left open goes straight to html5lib: tree-sitter-html's recovery from many unclosed `<!--` grows with
    the square of their number (measured: 16 KB of them, 2.4 s), html5lib's comment state is linear."""
    if code.count("<!--") > code.count("-->"):
        return True
    tree = _parser().parse(code.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        return True
    cursor = tree.root_node.walk()
    while True:
        node = cursor.node
        assert node is not None
        if node.type == "element":
            children = node.children
            start = children[0] if children else None
            if start is not None and start.type == "start_tag" and children[-1].type != "end_tag":
                names = [child for child in start.children if child.type == "tag_name"]
                name = (names[0].text or b"").decode("utf-8", "replace").lower() if names else ""
                if name not in _VOID and name not in _OPTIONAL_END:
                    return True
        elif node.type in ("script_element", "style_element") and node.children[-1].type != "end_tag":
            return True
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
