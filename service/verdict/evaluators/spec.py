"""What ListEvaluators says about an evaluator type: its fields (with defaults and range rules) and its verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["EvaluatorSpec", "FieldSpec"]


@dataclass(frozen=True)
class FieldSpec:
    """One configuration key of an evaluator type.

    `type` is one of the EvaluatorField.type strings of the proto ("string", "number", "integer", "boolean",
    "number|string", "string|integer", "any", "list[string]", "object", "list[object]"). `choices`, `minimum` and
    `maximum` are the range rules validation applies; they are not part of the wire catalogue.
    """

    name: str
    type: str
    description: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class EvaluatorSpec:
    """One evaluator type as ListEvaluators describes it; the flags are part of the wire catalogue, but one.

    `reads_timeouts` is not on the wire: it says the type gives exit code 124 (a timed-out action) a verdict of its
    own, so the dispatcher's "124 is error" short-circuit (`deterministic.short_circuit`) lets it through. It lives
    here, beside `exit_code_aware`, because it is the same kind of rule, read at the same place, and the record is
    the one owner of everything that differs between types (the dispatcher switches on no type name). A type that
    reads timeouts reads exit codes, so it is also `exit_code_aware` (`Evaluator.problems` checks it).
    """

    type: str
    description: str
    fields: tuple[FieldSpec, ...]
    verdicts: tuple[str, ...]
    open_verdicts: bool = False
    exit_code_aware: bool = False
    reads_timeouts: bool = False
    uses_judge: bool = False
    stateful: bool = False
    text_member: str = ""
    """For a type whose EvaluatorConfig member is a string (promptfoo, openai_grader): the field that text fills,
    so `{"promptfoo": "<assert list>"}` on the wire is `{"type": "promptfoo", "assert": "<assert list>"}` here, the
    same dict a `yaml` block writing the field itself gives. Not on the wire."""

    def field(self, name: str) -> FieldSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)
