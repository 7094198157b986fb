"""TOML (the standard library's `tomllib`) and XML (expat, through `xml.parsers.expat`): strict formats, strict parsers.

Both are pure and C-speed or close to it; neither fetches anything (expat resolves no external entity unless asked,
and this module never asks).
"""

from __future__ import annotations

import re
import tomllib
from xml.parsers import expat

from verdict.verify.model import CodeCheck, Verdict

__all__ = ["check_toml", "check_xml"]

_TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")
_TOML_REDEFINITION = re.compile(r"Cannot (?:overwrite|declare|mutate)", re.IGNORECASE)


def check_toml(code: str) -> CodeCheck:
    """TOML is one document and a fragment of one is still a document, so no fragment forms are needed.

    A key or table defined twice is unverifiable, not malformed: answers show alternatives side by side ("either
    `[tool.x]` like this, or like that") in one block, which is two valid documents rather than a broken one.
    """
    try:
        tomllib.loads(code)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _TOML_POSITION.search(message)
        line = int(match.group(1)) if match and match.group(1) else _last_line(code)
        detail = _TOML_POSITION.sub("", message).strip()
        if _TOML_REDEFINITION.search(message):
            return CodeCheck(Verdict.UNVERIFIABLE, f"{detail}: possibly alternatives shown side by side", line)
        return CodeCheck(Verdict.MALFORMED, detail, line)
    except RecursionError:
        return CodeCheck(Verdict.UNVERIFIABLE, "nested too deeply for the TOML parser")
    return CodeCheck(Verdict.OK)


_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_XML_FRAGMENT_ERRORS = frozenset(
    {
        expat.errors.codes[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT],
        expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS],
    }
)
"""Errors a fragment with several top-level elements, or only text around elements, raises as a document."""
_XML_UNKNOWABLE = {
    expat.errors.codes[expat.errors.XML_ERROR_UNDEFINED_ENTITY]: "an entity declared outside the block (&nbsp; from "
    "HTML, a DTD's own)",
    expat.errors.codes[expat.errors.XML_ERROR_UNBOUND_PREFIX]: "a namespace prefix declared outside the block",
    expat.errors.codes[expat.errors.XML_ERROR_AMPLIFICATION_LIMIT_BREACH]: "entity expansion past expat's "
    "amplification limit",
}
"""Errors that say what the block leans on, not that it is broken."""


def check_xml(code: str) -> CodeCheck:
    """XML as a document, then, if it is a fragment (several top-level elements), inside one wrapper element."""
    error = _parse_xml(code)
    if error is not None and error.code in _XML_FRAGMENT_ERRORS:
        body = _XML_DECLARATION.sub(lambda match: "\n" * match.group().count("\n"), code)
        if "<!DOCTYPE" not in body:
            wrapped = _parse_xml(f"<v__>{body}</v__>")
            if wrapped is None:
                return CodeCheck(Verdict.OK)
            error = wrapped
    if error is None:
        return CodeCheck(Verdict.OK)
    message = expat.errors.messages[error.code] if error.code else str(error)
    line = min(error.lineno, _last_line(code))
    if error.code in _XML_UNKNOWABLE:
        return CodeCheck(Verdict.UNVERIFIABLE, f"{message}: {_XML_UNKNOWABLE[error.code]}", line)
    return CodeCheck(Verdict.MALFORMED, f"{message} (column {error.offset + 1})", line)


def _parse_xml(text: str) -> expat.ExpatError | None:
    parser = expat.ParserCreate()
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        return error
    except RecursionError:
        return None
    return None


def _last_line(code: str) -> int:
    return code.count("\n") + (0 if code.endswith("\n") or not code else 1)
