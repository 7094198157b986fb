"""Evaluate's evaluators: the little-loops catalogue as pure functions behind one dispatcher.

The rpc layer builds an `EvaluationInput` (the configuration as a plain dict, from a typed oneof member or from
`load_evaluate_block` for the `yaml` member), calls `Evaluations.evaluate`, and converts the `EvaluationResult`
back; `Evaluations.catalogue` is ListEvaluators. LLM-judged types are supplied as `JudgedEvaluator`s. Nothing here
imports grpc. Behaviour and every deviation from the reference: docs/evaluators.md.
"""

from verdict.evaluators.catalogue import EvaluatorSpec, FieldSpec, load_evaluate_block
from verdict.evaluators.dispatch import Evaluations
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import EvaluationInput, EvaluationResult, JudgedEvaluator

__all__ = [
    "EvaluationInput",
    "EvaluationResult",
    "Evaluations",
    "EvaluatorSpec",
    "FieldSpec",
    "InterpolationError",
    "JudgedEvaluator",
    "Namespaces",
    "interpolate",
    "load_evaluate_block",
]
