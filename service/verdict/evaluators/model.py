"""The domain types of Evaluate: what goes in, what comes out, and what a pure evaluator sees. No I/O, no grpc."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from verdict.evaluators.interpolation import Namespaces
from verdict.verify.model import ToolCall, ToolDefinition

__all__ = [
    "EvaluationInput",
    "EvaluationResult",
    "GraderMalfunction",
    "JudgedEvaluator",
    "Judgement",
    "ModelGrader",
    "ResponseFacts",
    "Step",
    "ToolCall",
    "ToolDefinition",
]


@dataclass(frozen=True)
class ResponseFacts:
    """What the provider said about the step besides its text: the facts promptfoo's assertions, OpenAI's graders
    and the trajectory evaluator read. The little-loops types read none of them."""

    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = ""
    latency_ms: float | None = None
    cost: float | None = None
    logprobs: tuple[float, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()


@dataclass(frozen=True)
class EvaluationInput:
    """One Evaluate request in domain form.

    `config` is a plain dict (`{"type": "output_numeric", "operator": "eq", "target": 5.0}`), built by the rpc layer
    from a typed oneof member or by `load_evaluate_block` from the `yaml` member; both go through one validation.
    `context` holds the interpolation namespaces; `state` is the token of this evaluator's previous response.
    """

    config: Mapping[str, Any]
    output: str = ""
    exit_code: int = 0
    context: Mapping[str, Any] = field(default_factory=dict)
    state: bytes = b""
    workspace: str = ""
    facts: ResponseFacts = field(default_factory=ResponseFacts)


@dataclass(frozen=True)
class EvaluationResult:
    """The routing verdict. `details` holds JSON values only (it becomes a protobuf Struct)."""

    verdict: str
    details: dict[str, Any]
    state: bytes = b""


@dataclass(frozen=True)
class Step:
    """Everything a pure evaluator is a function of, after validation.

    `settings` is the validated configuration with every default filled in; `output` is the action's stdout, or the
    interpolated `source` when one is configured; `state` is the decoded token payload (None on a first call).
    """

    settings: Mapping[str, Any]
    output: str = ""
    exit_code: int = 0
    namespaces: Namespaces = field(default_factory=Namespaces)
    state: Mapping[str, Any] | None = None
    facts: ResponseFacts = field(default_factory=ResponseFacts)


@dataclass(frozen=True)
class Judgement:
    """What a pure evaluator decides: a verdict, little-loops' details, and the payload of the next token.

    `state` None means the evaluator keeps no state (the response carries an empty token).
    """

    verdict: str
    details: dict[str, Any]
    state: Mapping[str, Any] | None = None


class JudgedEvaluator(Protocol):
    """An evaluator that asks an LLM judge (llm_structured, comparator, contract), supplied by the judges package.

    It receives the validated configuration with every default filled in, the request (its `output` already replaced
    by the interpolated `source` when one is set) and the caller's absolute `time.monotonic()` deadline, if any.
    """

    async def __call__(
        self, config: Mapping[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult: ...


class GraderMalfunction(Exception):
    """A model grader could not answer (no judge host, a timeout, an unreadable reply). `flags` are the judge's
    failure details (`timeout`, `api_error`, ...), reported beside the check's `error`."""

    def __init__(self, message: str, flags: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.flags = dict(flags or {})


class ModelGrader(Protocol):
    """A model-graded check inside a family that is otherwise pure (an OpenAI score_model or label_model grader, a
    promptfoo llm-rubric): the judges package supplies it, the dispatcher hands it to the run through `Outside`.

    `messages` are the rendered chat messages (role, content); `schema` is the JSON schema of the answer object. It
    returns the answer object, or raises `GraderMalfunction` when the judge could not answer (timeout, no host,
    unreadable reply): the check is then `error`, never a failure charged to the model.
    """

    async def __call__(
        self,
        messages: tuple[tuple[str, str], ...],
        schema: Mapping[str, Any],
        *,
        model: str,
        evaluator: str,
        deadline: float | None,
    ) -> dict[str, Any]: ...
