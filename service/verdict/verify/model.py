"""The domain types of VerifyResponse: what goes in, what comes out. No I/O, no grpc."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BlockCheck", "CodeCheck", "SecondOpinionResult", "Verdict", "Verification", "VerifyInput"]


class Verdict(StrEnum):
    """A structural verdict. Truncated outranks malformed outranks ok; unverifiable is not a failure."""

    OK = "ok"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"
    UNVERIFIABLE = "unverifiable"

    @property
    def failed(self) -> bool:
        return self in (Verdict.TRUNCATED, Verdict.MALFORMED)


@dataclass(frozen=True)
class VerifyInput:
    """One completion and the envelope facts its provider returned."""

    text: str
    finish_reason: str = ""
    has_tool_calls: bool = False
    completion_tokens: int = 0
    request_text: str = ""
    model: str = ""


@dataclass(frozen=True)
class BlockCheck:
    """The outcome of checking one fenced block. Lines are one-based lines of the whole response."""

    block_index: int
    language: str
    verdict: Verdict
    detail: str = ""
    line: int = 0
    error_line: int = 0


@dataclass(frozen=True)
class CodeCheck:
    """What one language checker said about one block's code, before it is placed in the response.

    `line` is the one-based line of the block's body the parser blamed (0 for none); the rules turn it into a line of
    the whole response. `detail` is the parser's own message without any line prefix.
    """

    verdict: Verdict
    detail: str = ""
    line: int = 0


@dataclass(frozen=True)
class SecondOpinionResult:
    """A judge's usable reading of an answer nothing structural could check."""

    verdict: Verdict
    reason: str
    host: str


@dataclass(frozen=True)
class Verification:
    """What can be said about a whole response."""

    verdict: Verdict
    detail: str = ""
    checks: tuple[BlockCheck, ...] = ()
    second_opinion: SecondOpinionResult | None = None

    @property
    def failed(self) -> bool:
        return self.verdict.failed
