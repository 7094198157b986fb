"""Evaluate's evaluators: the little-loops catalogue as one record per type behind one dispatcher.

The rpc layer builds an `EvaluationInput` (the configuration as a plain dict, from a typed oneof member or from
`load_evaluate_block` for the `yaml` member), calls `Evaluations.evaluate`, and converts the `EvaluationResult`
back; `Evaluations.catalogue` is ListEvaluators. Each type is an `Evaluator` record in `CATALOGUE`; LLM-judged
types get their run from the judges package as `JudgedEvaluator`s. Nothing here imports grpc. Behaviour and every
deviation from little-loops: docs/evaluators.md.
"""

from verdict.evaluators.catalogue import CATALOGUE, DEFAULT_CONTRACT, validate
from verdict.evaluators.dispatch import Evaluations
from verdict.evaluators.evaluate_block import load_evaluate_block
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import (
    EvaluationInput,
    EvaluationResult,
    GraderMalfunction,
    JudgedEvaluator,
    Judgement,
    ModelGrader,
    ResponseFacts,
    Step,
    ToolCall,
    ToolDefinition,
)
from verdict.evaluators.outside import Outside
from verdict.evaluators.record import Evaluator, Pure, Registry
from verdict.evaluators.spec import EvaluatorSpec, FieldSpec
from verdict.evaluators.values import jsonable, whole_numbers

__all__ = [
    "CATALOGUE",
    "DEFAULT_CONTRACT",
    "EvaluationInput",
    "EvaluationResult",
    "Evaluations",
    "Evaluator",
    "EvaluatorSpec",
    "FieldSpec",
    "GraderMalfunction",
    "InterpolationError",
    "JudgedEvaluator",
    "Judgement",
    "ModelGrader",
    "Namespaces",
    "Outside",
    "Pure",
    "Registry",
    "ResponseFacts",
    "Step",
    "ToolCall",
    "ToolDefinition",
    "interpolate",
    "jsonable",
    "load_evaluate_block",
    "validate",
    "whole_numbers",
]
