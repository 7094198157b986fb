"""Evaluate: one request through the reference's dispatcher order, then the evaluator, then the metrics.

The order (reference §2, §10), and what happens at each step:

1. The type is looked up (an unknown type is INVALID_ARGUMENT): the short-circuit rules are defined per type.
2. Exit code 124 is `error` for every type but mcp_result (BUG-1640); any other non-zero exit is `error` for the
   types that do not read exit codes (BUG-1815). These run before the rest of the configuration is checked, as in
   the reference, so a timed-out or crashed action routes to `on_error` even under a faulty evaluate block; the
   fault surfaces as INVALID_ARGUMENT on the next call whose action succeeds. A stateful evaluator hands back the
   token it was given, unchanged, as the reference left its files untouched.
3. The configuration, the context namespaces and the state token are validated.
4. `source`, when set, is interpolated and replaces the output (the raw output when it does not resolve).
5. The evaluator runs: a pure function, after the one piece of outside work some need (a time-bounded regex search
   off the event loop, `git diff --stat` through the runner), or an LLM judge supplied by the judges package.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from verdict import patterns
from verdict.config import Config
from verdict.errors import DeadlineTooShort, FailedPrecondition, InvalidArgument
from verdict.evaluators import deterministic, stall, state
from verdict.evaluators.catalogue import SPECS, EvaluatorSpec, evaluator_type, validate
from verdict.evaluators.diffstat import GitFailed, diff_stat
from verdict.evaluators.fingerprint import fingerprint
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import EvaluationInput, EvaluationResult, JudgedEvaluator, Judgement, Step
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.workspace import find_repository, resolve_inside

__all__ = ["MAX_DETAIL_DEPTH", "PURE_EVALUATORS", "Evaluations", "jsonable"]

MAX_DETAIL_DEPTH = 16
"""Containers below this depth in details are sent as their JSON text: clients' protobuf decoders refuse messages
nested past 100 levels, and each level of a Struct costs about three (a JSON object nested 33 deep is undecodable)."""

PURE_EVALUATORS: dict[str, Callable[[Step], Judgement]] = {
    # Every type whose algorithm is a pure function of one step; diff_stall and the judges go outside.
    "exit_code": deterministic.exit_code,
    "output_numeric": deterministic.output_numeric,
    "output_json": deterministic.output_json,
    "convergence": deterministic.convergence,
    "classify": deterministic.classify,
    "mcp_result": deterministic.mcp_result,
    "harbor_scorer": deterministic.harbor_scorer,
    "action_stall": stall.action_stall,
    "score_stall": stall.score_stall,
    "open_question_stall": stall.open_question_stall,
}
_IDENTITY: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "action_stall": stall.action_stall_identity,
    "score_stall": stall.score_stall_identity,
    "open_question_stall": stall.score_stall_identity,
}


class Evaluations:
    """The Evaluate and ListEvaluators behaviour, independent of gRPC. One per server."""

    def __init__(
        self,
        config: Config,
        runner: Runner,
        metrics: Metrics,
        judged: Mapping[str, JudgedEvaluator] | None = None,
    ) -> None:
        self._config = config
        self._runner = runner
        self._metrics = metrics
        self._judged: dict[str, JudgedEvaluator] = dict(judged or {})

    def catalogue(self) -> tuple[EvaluatorSpec, ...]:
        """Every evaluator type, sorted by type; a judge's `model` shows the server's judge_model as its default."""
        return tuple(self._with_server_defaults(SPECS[kind]) for kind in sorted(SPECS))

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
        spec = evaluator_type(request.config)
        result = await self._evaluate(spec, request, deadline)
        result = EvaluationResult(result.verdict, jsonable(result.details), result.state)
        label = self._metrics.verdict_labels.fold(result.verdict, scope=spec.type)
        self._metrics.evaluations.labels(evaluator=spec.type, verdict=label).inc()
        self._metrics.evaluation_duration.labels(evaluator=spec.type).observe(time.monotonic() - started)
        return result

    async def _evaluate(
        self, spec: EvaluatorSpec, request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        short = deterministic.short_circuit(spec.type, request.exit_code)
        if short is not None:
            return EvaluationResult(short.verdict, short.details, request.state if spec.stateful else b"")
        settings = validate(request.config, judge_model=self._config.judge_model)
        namespaces = Namespaces.from_context(request.context)
        output = _source(settings["source"], request.output, namespaces)
        if spec.uses_judge:
            return await self._judge(spec, settings, replace(request, output=output), deadline)
        if not spec.stateful and request.state:
            raise InvalidArgument(
                f"{spec.type} keeps no state; send an empty state", field="state", reason="INVALID_STATE_TOKEN"
            )
        step = Step(settings, output, request.exit_code, namespaces)
        if spec.type == "output_contains":
            return await self._output_contains(step, deadline)
        if spec.type == "diff_stall":
            return await self._diff_stall(step, request, deadline)
        if spec.stateful:
            key = state.identity(spec.type, _IDENTITY[spec.type](settings))
            step = replace(step, state=state.decode(request.state, spec.type, key))
            return _result(spec.type, key, PURE_EVALUATORS[spec.type](step))
        return _result(spec.type, "", PURE_EVALUATORS[spec.type](step))

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

    async def _output_contains(self, step: Step, deadline: float | None) -> EvaluationResult:
        bound = self._bound(self._config.regex_timeout_seconds, deadline)
        pattern: str = step.settings["pattern"]
        try:
            matched = await patterns.search(pattern, step.output, timeout=bound)
        except patterns.PatternTooLarge as refused:
            details = {"error": str(refused), "pattern": pattern, "negate": step.settings["negate"]}
            return EvaluationResult("error", details)
        except patterns.PatternTimeout:
            details = {
                "error": f"pattern did not finish within {bound:g}s (regex_timeout_seconds); simplify it",
                "pattern": pattern,
                "negate": step.settings["negate"],
                "timed_out": True,
            }
            return EvaluationResult("error", details)
        # Each error pattern is a pass over the output: off the event loop too.
        judgement = await asyncio.to_thread(deterministic.output_contains, step, matched=matched)
        return _result("output_contains", "", judgement)

    async def _diff_stall(self, step: Step, request: EvaluationInput, deadline: float | None) -> EvaluationResult:
        root = self._config.workspace_root
        if not root:
            raise FailedPrecondition(
                "diff_stall runs git in a workspace under the server's workspace_root, and none is configured "
                "(set --workspace-root)",
                reason="NO_WORKSPACE_ROOT",
                metadata={"evaluator": "diff_stall"},
            )
        resolved_root = Path(root).resolve()
        workspace = resolve_inside(resolved_root, request.workspace or ".")
        relative = workspace.relative_to(resolved_root).as_posix()
        key = state.identity("diff_stall", stall.diff_stall_identity(step.settings, relative))
        step = replace(step, state=state.decode(request.state, "diff_stall", key))
        if not workspace.is_dir():
            return EvaluationResult("error", {"error": f"workspace {relative!r} is not a directory"}, request.state)
        repository = find_repository(resolved_root, workspace)
        if repository is None:
            error = f"git diff failed: {relative!r} is not in a git repository under the workspace root"
            return EvaluationResult("error", {"error": error}, request.state)
        bound = self._bound(self._config.git_timeout_seconds, deadline)
        scope = step.settings["scope"]
        try:
            if step.settings["compare"] == "stat":
                diff = await diff_stat(
                    self._runner, repository, root=resolved_root, cwd=workspace, scope=scope, timeout=bound
                )
                return _result("diff_stall", key, stall.diff_stall(step, diff))
            found = await fingerprint(
                self._runner,
                repository,
                root=resolved_root,
                cwd=workspace,
                scope=scope,
                timeout=bound,
                max_bytes=self._config.diff_stall_max_bytes,
                max_files=self._config.diff_stall_max_files,
            )
        except GitFailed as failure:
            return EvaluationResult("error", {"error": str(failure)}, request.state)
        return _result("diff_stall", key, stall.diff_stall_content(step, found.parts()))

    @staticmethod
    def _bound(limit: float, deadline: float | None) -> float:
        """The configured limit, or less when the caller's deadline is nearer; no time left is DEADLINE_EXCEEDED."""
        if deadline is None:
            return limit
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineTooShort("the call's deadline passed before the evaluation could start")
        return min(limit, remaining)


def _source(source: str | None, output: str, namespaces: Namespaces) -> str:
    """The executor's `source:` (BUG-880/ENH-536): its interpolated value is the input; the raw output if it fails."""
    if not source:
        return output
    try:
        return interpolate(source, namespaces)
    except InterpolationError:
        return output


def _result(evaluator: str, key: str, judgement: Judgement) -> EvaluationResult:
    token = b"" if judgement.state is None else state.encode(evaluator, key, judgement.state)
    return EvaluationResult(judgement.verdict, judgement.details, token)


def jsonable(value: Any, depth: int = 0) -> Any:
    """Details as strict JSON that a Struct holds and every client can decode (outputs are untrusted JSON).

    NaN and infinities (Python's float parse accepts "nan", "inf") become the strings "nan", "inf", "-inf"; an
    integer too large for a double (past about 1e308; a Struct number is a double) becomes its decimal string; a
    container nested MAX_DETAIL_DEPTH deep becomes its compact JSON text; any other object becomes its str().
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:
            return str(value)
        return value
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_DETAIL_DEPTH:
        return _json_text(value)
    if isinstance(value, Mapping):
        return {str(key): jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item, depth + 1) for item in value]
    if value is None or isinstance(value, str | bool | float):
        return value
    return str(value)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError):
        return "(nested too deeply to show)"
