"""Verdict: cheap, exact verdicts for agent loops, served over gRPC.

**The reference** is little-loops, the agent-loop runner whose response verifier (VerifyResponse here) and evaluator
catalogue (Evaluate, the LLM-judged evaluators and their judge hosts included) Verdict reproduces, with the same
verdicts and details. Wherever a docstring, a comment or a doc says "the reference", it means little-loops' own
implementation of the thing at hand; every deliberate difference from it is listed in docs/verification.md,
docs/evaluators.md and docs/judges.md.

The package is laid out by layer, each package's `__init__` saying what it holds (docs/architecture.md, "The house"):
`errors`, `metrics` < `config` < `runner`, `security` < `workspace`, `verify` < `evaluators` < `judges` < `rpc` <
`server` < `cli`, a package using only those before it; tests/test_layers.py keeps that direction.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
