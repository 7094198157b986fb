"""One record per evaluator type, and the registry the dispatcher reads them from.

A record holds everything that differs between evaluator types: the spec ListEvaluators shows (fields, defaults,
verdicts, flags), the run, the state identity, the checks that span several fields, and whether it needs the
workspace. The dispatcher switches on none of them, so a new evaluator is its proto message, one record and its
tests; `Evaluator.problems` names any piece a record lacks, and a `Registry` refuses to hold an incomplete record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from verdict.config.keys import DEFAULT_JUDGE_MODEL
from verdict.evaluators.model import EvaluationResult, Judgement, Step
from verdict.evaluators.outside import Outside
from verdict.evaluators.spec import EvaluatorSpec
from verdict.evaluators.validation import check_fields, evaluator_type

__all__ = ["Check", "Evaluator", "Identity", "Pure", "Registry", "Run"]

Run = Callable[[Step, Outside], Awaitable[Judgement | EvaluationResult]]
"""An evaluator's algorithm. A Judgement's state is encoded into the next token; an EvaluationResult is the answer
as it stands (the error paths that hand the caller's token back unchanged)."""

Identity = Callable[[Mapping[str, Any], str], Mapping[str, Any]]
"""The settings (and the workspace relative to workspace_root, "" for types without one) a state token is bound to."""

Check = Callable[[dict[str, Any]], None]
"""A check across fields, after every field passed alone: raises InvalidConfig, and may normalise settings in place."""


class Pure:
    """The run of an evaluator that is a pure function of its step; the function stays callable as `function`."""

    def __init__(self, function: Callable[[Step], Judgement]) -> None:
        self.function = function

    async def __call__(self, step: Step, outside: Outside) -> Judgement:
        return self.function(step)

    def __repr__(self) -> str:
        return f"Pure({self.function.__name__})"


@dataclass(frozen=True)
class Evaluator:
    """One evaluator type. `run` is None exactly for judge-backed types, whose run the judges package supplies."""

    spec: EvaluatorSpec
    run: Run | None
    identity: Identity | None = None
    checks: tuple[Check, ...] = ()
    needs_workspace: bool = False

    @property
    def type(self) -> str:
        return self.spec.type

    def problems(self) -> list[str]:
        """What this record lacks or contradicts; empty when it is complete."""
        spec, found = self.spec, []
        if not spec.type or not spec.description or not spec.verdicts:
            found.append(f"{spec.type or '?'}: a type, a description and verdicts are required")
        if spec.uses_judge != (self.run is None):
            found.append(f"{spec.type}: a run is required exactly when the type does not use a judge")
        if spec.stateful and not spec.uses_judge and self.identity is None:
            found.append(f"{spec.type}: a stateful type needs the identity its state token is bound to")
        if not spec.stateful and self.identity is not None:
            found.append(f"{spec.type}: an identity without state binds no token")
        if spec.reads_timeouts and not spec.exit_code_aware:
            found.append(f"{spec.type}: a type that reads timeouts (exit 124) reads exit codes, so is exit_code_aware")
        if spec.field("source") is None:
            found.append(f"{spec.type}: every type accepts `source`")
        for field in spec.fields:
            if not field.description:
                found.append(f"{spec.type}.{field.name}: a description is required")
        return found


class Registry(Mapping[str, Evaluator]):
    """The evaluator records by type: lookup, validation and the catalogue, all derived from the records.

    Construction fails fast with a ValueError naming every problem of an incomplete record (as prometheus_client's
    metrics refuse a bad name), so the built-in catalogue cannot even be imported with a piece missing, and a caller
    never meets the gap as INTERNAL.
    """

    def __init__(self, records: Iterable[Evaluator]) -> None:
        self._records: dict[str, Evaluator] = {}
        for record in records:
            if record.type in self._records:
                raise ValueError(f"two records for evaluator type {record.type!r}")
            self._records[record.type] = record
        problems = [problem for kind in sorted(self._records) for problem in self._records[kind].problems()]
        if problems:
            raise ValueError("incomplete evaluator records: " + "; ".join(problems))
        self.specs: Mapping[str, EvaluatorSpec] = {kind: record.spec for kind, record in self._records.items()}

    def __getitem__(self, kind: str) -> Evaluator:
        return self._records[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def lookup(self, config: Mapping[str, Any]) -> Evaluator:
        """The record of the configuration's `type`; an unknown or missing type is InvalidConfig."""
        return self._records[evaluator_type(config, self.specs).type]

    def validate(self, config: Mapping[str, Any], *, judge_model: str = DEFAULT_JUDGE_MODEL) -> dict[str, Any]:
        """Check a configuration against its type's record and return it with every default filled in.

        Numbers come back as float (integers as int), lists as lists. `source` is always present (None when unset);
        `model` of the judge types defaults to `judge_model`. Raises InvalidConfig naming `config.<key>`.
        """
        record = self.lookup(config)
        settings = check_fields(record.spec, config, self.specs, judge_model=judge_model)
        for check in record.checks:
            check(settings)
        return settings
