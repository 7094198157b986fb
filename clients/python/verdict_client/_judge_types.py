"""Generated from the server's evaluator records (`EvaluatorSpec.uses_judge`); do not edit.

Regenerate with `.venv/bin/python -m tests.clients.test_judge_types`;
tests/clients/test_judge_types.py fails when this copy and the records part.
"""

JUDGE_TYPES = frozenset({"comparator", "contract", "llm_structured"})
"""Evaluator types that ask an LLM judge: they get the longer default deadline."""
