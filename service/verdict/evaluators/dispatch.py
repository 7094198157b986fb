"""Evaluate: one request through the dispatcher's fixed order, then the evaluator's record, then the metrics.

The order, and what happens at each step:

1. The type is looked up (an unknown type is INVALID_ARGUMENT): the short-circuit rules are defined per type.
2. Exit code 124 is `error` for every type whose record does not read timeouts (`reads_timeouts`; a timed-out
   action printed truncated output, and judging it burned retries); any other non-zero exit is `error` for the types
   that do not read exit codes (a crashed action judged by its output took the `no` route). These run before the
   rest of the configuration is checked, as in little-loops, so a timed-out or crashed action routes to `on_error`
   even under a faulty evaluate block; the fault surfaces as INVALID_ARGUMENT on the next call whose action
   succeeds. A stateful evaluator hands back the token it was given, unchanged, as little-loops left its state files
   untouched.
3. The configuration (against the record's fields and checks), the context namespaces and the state token are
   validated; a type that needs the workspace has it resolved inside workspace_root.
4. `source`, when set, is interpolated and replaces the output (the raw output when it does not resolve).
5. The record's run: a pure function, or one that does the outside work it needs (a time-bounded regex search off the
   event loop, git through the runner for diff_stall), or an LLM judge supplied by the judges package.

Nothing here names an evaluator type: everything that differs between types is in its record (`catalogue.py`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from verdict.config.keys import Config
from verdict.errors import FailedPrecondition, InvalidArgument
from verdict.evaluators import deterministic, state
from verdict.evaluators.catalogue import CATALOGUE
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import EvaluationInput, EvaluationResult, JudgedEvaluator, ModelGrader, Step
from verdict.evaluators.outside import Outside, Workspace
from verdict.evaluators.record import Evaluator, Registry
from verdict.evaluators.spec import EvaluatorSpec
from verdict.evaluators.validation import ignored_keys
from verdict.evaluators.values import jsonable
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.workspace import inside

__all__ = ["Evaluations"]


class Evaluations:
    """The Evaluate and ListEvaluators behaviour, independent of gRPC. One per server.

    `judged` supplies the run of each judge-backed record (the judges package builds it); `registry` is the
    catalogue of records, the built-in one unless a test or an embedding brings its own; `grader` answers the
    model-graded checks of the otherwise pure families (OpenAI score_model and label_model graders, promptfoo's
    model-graded assertions), None when no judge is wired in.
    """

    def __init__(
        self,
        config: Config,
        runner: Runner,
        metrics: Metrics,
        judged: Mapping[str, JudgedEvaluator] | None = None,
        *,
        registry: Registry = CATALOGUE,
        grader: ModelGrader | None = None,
    ) -> None:
        self._config = config
        self._runner = runner
        self._metrics = metrics
        self._judged: dict[str, JudgedEvaluator] = dict(judged or {})
        self._registry = registry
        self._grader = grader

    def catalogue(self) -> tuple[EvaluatorSpec, ...]:
        """Every evaluator type, sorted by type; a judge's `model` shows the server's judge_model as its default."""
        return tuple(self._with_server_defaults(self._registry[kind].spec) for kind in sorted(self._registry))

    def _with_server_defaults(self, spec: EvaluatorSpec) -> EvaluatorSpec:
        if spec.field("model") is None:
            return spec
        fields = tuple(
            replace(field, default=self._config.judge_model) if field.name == "model" else field
            for field in spec.fields
        )
        return replace(spec, fields=fields)

    async def evaluate(self, request: EvaluationInput, *, deadline: float | None = None) -> EvaluationResult:
        """The routing verdict for one loop step. Raises the VerdictError the rpc layer maps to a status.

        `deadline` is the caller's absolute `time.monotonic()` deadline, or None.
        """
        started = time.monotonic()
        record = self._registry.lookup(request.config)
        result = await self._evaluate(record, request, deadline)
        result = EvaluationResult(result.verdict, jsonable(result.details), result.state)
        label = self._metrics.verdict_labels.label(
            record.type, result.verdict, record.spec.verdicts, requested=_schema_verdicts(request.config)
        )
        self._metrics.evaluations.labels(evaluator=record.type, verdict=label).inc()
        self._metrics.evaluation_duration.labels(evaluator=record.type).observe(time.monotonic() - started)
        return result

    async def _evaluate(self, record: Evaluator, request: EvaluationInput, deadline: float | None) -> EvaluationResult:
        spec = record.spec
        short = deterministic.short_circuit(spec, request.exit_code)
        if short is not None:
            return EvaluationResult(short.verdict, short.details, request.state if spec.stateful else b"")
        settings = self._registry.validate(request.config, judge_model=self._config.judge_model)
        ignored = ignored_keys(spec, request.config)
        result = await self._checked(record, settings, request, deadline)
        if ignored:
            return replace(result, details={**result.details, "ignored_keys": ignored})
        return result

    async def _checked(
        self, record: Evaluator, settings: dict[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        spec = record.spec
        namespaces = Namespaces.from_context(request.context)
        output = _source(settings["source"], request.output, namespaces)
        if record.run is None:
            return await self._judge(spec, settings, replace(request, output=output), deadline)
        if not spec.stateful and request.state:
            raise InvalidArgument(
                f"{spec.type} keeps no state; send an empty state", field="state", reason="INVALID_STATE_TOKEN"
            )
        workspace = self._workspace(spec.type, request.workspace) if record.needs_workspace else None
        step = Step(settings, output, request.exit_code, namespaces, facts=request.facts)
        key = ""
        if record.identity is not None:
            key = state.identity(spec.type, record.identity(settings, workspace.relative if workspace else ""))
            step = replace(step, state=state.decode(request.state, spec.type, key))
        outside = Outside(self._config, self._runner, deadline, request.state, workspace, self._grader)
        outcome = await record.run(step, outside)
        if isinstance(outcome, EvaluationResult):
            return outcome
        token = b"" if outcome.state is None else state.encode(spec.type, key, outcome.state)
        return EvaluationResult(outcome.verdict, outcome.details, token)

    async def _judge(
        self, spec: EvaluatorSpec, settings: dict[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        judge = self._judged.get(spec.type)
        if judge is None:
            raise FailedPrecondition(
                f"no LLM judge is configured on this server, so it cannot run {spec.type}",
                reason="NO_JUDGE",
                metadata={"evaluator": spec.type},
            )
        return await judge(settings, request, deadline)

    def _workspace(self, kind: str, requested: str) -> Workspace:
        """The request's workspace inside workspace_root; none configured is FAILED_PRECONDITION, outside it
        PERMISSION_DENIED."""
        root = self._config.workspace_root
        if not root:
            raise FailedPrecondition(
                f"{kind} runs git in a workspace under the server's workspace_root, and none is configured "
                "(set workspace_root: VERDICT_WORKSPACE_ROOT, or --workspace-root on `verdict serve` and "
                "`verdict evaluate`)",
                reason="NO_WORKSPACE_ROOT",
                metadata={"evaluator": kind},
            )
        return Workspace(root, inside(root, requested or ".", "workspace"))


_MAX_SCHEMA_VERDICTS = 20


def _schema_verdicts(config: Mapping[str, Any]) -> frozenset[str]:
    """The verdicts a request's custom JSON schema declares (`properties.verdict.enum`, and their `_uncertain`
    forms): the only verdicts of an open evaluator the request itself may name as metric labels. An enum longer than
    `_MAX_SCHEMA_VERDICTS` declares none."""
    schema = config.get("schema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    verdict = properties.get("verdict") if isinstance(properties, Mapping) else None
    enum = verdict.get("enum") if isinstance(verdict, Mapping) else None
    if not isinstance(enum, list) or len(enum) > _MAX_SCHEMA_VERDICTS:
        return frozenset()
    names = [item for item in enum if isinstance(item, str)]
    return frozenset(names) | {f"{name}_uncertain" for name in names}


def _source(source: str | None, output: str, namespaces: Namespaces) -> str:
    """little-loops' `source:`: its interpolated value is the evaluator's input; the raw output when it fails."""
    if not source:
        return output
    try:
        return interpolate(source, namespaces)
    except InterpolationError:
        return output
