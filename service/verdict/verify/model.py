"""The domain types of VerifyResponse: what goes in, what comes out. No I/O, no grpc."""

from __future__ import annotations

from enum import StrEnum

from verdict.records import record

__all__ = [
    "BlockCheck",
    "CodeCheck",
    "SecondOpinionResult",
    "ToolCall",
    "ToolCheck",
    "ToolDefinition",
    "Verdict",
    "Verification",
    "VerifyInput",
]


class Verdict(StrEnum):
    """A structural verdict. Truncated outranks malformed outranks ok; unverifiable is not a failure."""

    OK = "ok"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"
    UNVERIFIABLE = "unverifiable"

    @property
    def failed(self) -> bool:
        return self in (Verdict.TRUNCATED, Verdict.MALFORMED)


@record
class ToolCall:
    """One tool call the model made; `arguments` exactly as the provider returned them (a JSON text)."""

    id: str
    name: str
    arguments: str


@record
class ToolDefinition:
    """One tool declared to the model: `parameters` is the JSON Schema of its arguments as JSON text ("" = any object).

    `field` is where the definition came from in the request (`tools[2].parameters`,
    `tools_json[0].function.parameters`), so a schema the server cannot use is refused naming the caller's field.
    """

    name: str
    description: str = ""
    parameters: str = ""
    strict: bool = False
    field: str = ""


@record
class VerifyInput:
    """One completion and the envelope facts its provider returned.

    `tool_calls` are the turn's calls, checked against `tools` (typed) or `tools_json` (the provider's own `tools`
    array, read and compiled by the verifier's cache, so a loop sending the same array every turn reads it once).
    """

    text: str
    finish_reason: str = ""
    has_tool_calls: bool = False
    completion_tokens: int = 0
    request_text: str = ""
    model: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    tools_json: str = ""

    @property
    def declares_tools(self) -> bool:
        """Whether any tools were declared for the turn (typed or as the provider's JSON)."""
        return bool(self.tools or self.tools_json)


@record
class ToolCheck:
    """The outcome of checking one tool call (or one call left in the text as markup).

    `reason` is a stable machine-readable token (`tool_calls.REASONS`), `pointer` a JSON Pointer (RFC 6901) into the
    arguments at the offending value, `schema_digest` the SHA-256 of the schema the call was checked against.
    """

    call_index: int
    id: str
    name: str
    verdict: Verdict
    detail: str = ""
    pointer: str = ""
    reason: str = ""
    schema_digest: str = ""


@record
class BlockCheck:
    """The outcome of checking one fenced block. Lines are one-based lines of the whole response."""

    block_index: int
    language: str
    verdict: Verdict
    detail: str = ""
    line: int = 0
    error_line: int = 0


@record
class CodeCheck:
    """What one language checker said about one block's code, before it is placed in the response.

    `line` is the one-based line of the block's body the parser blamed (0 for none); the rules turn it into a line of
    the whole response. `detail` is the parser's own message without any line prefix.
    """

    verdict: Verdict
    detail: str = ""
    line: int = 0


@record
class SecondOpinionResult:
    """A judge's usable reading of an answer nothing structural could check."""

    verdict: Verdict
    reason: str
    host: str


@record
class Verification:
    """What can be said about a whole response."""

    verdict: Verdict
    detail: str = ""
    checks: tuple[BlockCheck, ...] = ()
    second_opinion: SecondOpinionResult | None = None
    tool_checks: tuple[ToolCheck, ...] = ()

    @property
    def failed(self) -> bool:
        return self.verdict.failed
