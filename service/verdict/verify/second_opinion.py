"""The seam for an optional second opinion on answers nothing structural could check.

The Verifier asks only about unverifiable verdicts of turns that are not tool calls: an exact verdict (ok, truncated,
malformed) is free and right, and a fuzzy reading adds nothing to it; a tool turn reads as "cut off mid-sentence" to a
judge expecting a finished answer (8 false failures in 9 checks on real agent traffic, in the reference). Whether an
answer is long enough to be worth a judge's cost is the implementation's decision (`second_opinion_min_tokens`).
"""

from __future__ import annotations

from typing import Protocol

from verdict.verify.model import SecondOpinionResult, Verification, VerifyInput

__all__ = ["SecondOpinion"]


class SecondOpinion(Protocol):
    """Something that can read an unverifiable answer and say whether it looks complete."""

    async def consider(
        self, request: VerifyInput, verification: Verification, deadline: float | None = None
    ) -> SecondOpinionResult | None:
        """A usable reading of the answer, or None when there is none (not worth asking, judge failed, no sample).

        `deadline` is the caller's, as a `time.monotonic()` value: a judge the caller cannot wait for is not started.

        A judge that malfunctions must return None, never a failing verdict: the model must not be charged for it.
        """
        ...
