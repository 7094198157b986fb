"""Verdict: cheap, exact verdicts for agent loops, served over gRPC."""

__version__ = "0.1.0"
__all__ = ["__version__"]
