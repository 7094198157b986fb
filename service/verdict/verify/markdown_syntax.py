"""Markdown inside a Markdown answer (a README, a doc page in a ```` ````markdown ```` fence): its nested fences. Pure.

Any text is Markdown, so the only structure a cut or a lost line breaks is the fences it holds: a nested block that
is opened and never closed runs to the end of the document, exactly as a cut answer's last block does. The fences are
found by the same CommonMark scanner as the answer's own (`fences.py`, linear, containers included), so what counts
as a fence here is what a renderer shows as one. The nested blocks' code is not checked: a document's examples are
often deliberate excerpts. A block without nested fences has nothing structural to check and is unverifiable.
"""

from __future__ import annotations

from verdict.verify.fences import scan_fences_bounded
from verdict.verify.model import CodeCheck, Verdict

__all__ = ["MAX_NESTED_BLOCKS", "check_markdown"]

MAX_NESTED_BLOCKS = 1000
"""Nested blocks built per document; past it only the count and an unclosed last block are kept (still linear)."""


def check_markdown(code: str) -> CodeCheck:
    """Ok when every nested fence is closed; malformed at the opening line of one that is not."""
    scan = scan_fences_bounded(code, MAX_NESTED_BLOCKS)
    if not scan.total:
        return CodeCheck(Verdict.UNVERIFIABLE, "Markdown without nested fences: nothing structural to check")
    last = scan.unclosed_tail or scan.blocks[-1]
    if not last.closed and not last.container_end:
        return CodeCheck(Verdict.MALFORMED, f"the nested {last.fence}{last.language} fence is never closed", last.line)
    return CodeCheck(Verdict.OK, f"{scan.total} nested fences, all closed")
