"""How a panel's votes become one verdict: the quorum over the members that answered, then the tie policy. Pure.

A vote is a verdict, or None for a member that abstained (it malfunctioned: a timeout, a crash, an answer that could
not be read). Abstentions are not votes for anything: the quorum is counted over the answers, and when fewer members
answered than the quorum needs, there is no verdict (`error`) whatever the tie policy says: a guess is not a ruling.

    quorum      needs answers           a verdict wins when
    majority    more than half the      more than half of the answers are for it
                panel
    unanimous   more than half the      every answer is for it
                panel
    k           k                       at least k answers are for it, and for no other verdict

Without a winner the tie policy decides: `error` (no verdict), `cautious` (the evaluator's failing verdict: `no`, or
`tie` for comparator) or `first` (the vote of the first listed member that answered, a declared tie-breaker).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Decision", "decide", "needed_answers", "spread"]


@dataclass(frozen=True)
class Decision:
    """The panel's verdict (None: `error`), how it was reached, and the count of each verdict among the answers.

    `how`: quorum (a verdict met the quorum), tie_first / tie_cautious (the tie policy chose), no_winner (tie policy
    `error`), below_quorum (too few answers)."""

    verdict: str | None
    how: str
    counts: dict[str, int]
    answered: int
    needed: int


def needed_answers(quorum: str, voters: int) -> int:
    """How many answers a quorum needs before any verdict may be given."""
    if quorum.isdigit():
        return int(quorum)
    return voters // 2 + 1


def decide(votes: Sequence[str | None], quorum: str, tie: str, cautious: str) -> Decision:
    """The verdict `votes` (one per ask, None for an abstention) give under `quorum` and `tie` (see the module)."""
    answers = [vote for vote in votes if vote is not None]
    counts = dict(Counter(answers))
    needed = needed_answers(quorum, len(votes))
    if len(answers) < needed:
        return Decision(None, "below_quorum", counts, len(answers), needed)
    winner: str | None = None
    if quorum == "majority":
        winner = next((verdict for verdict, count in counts.items() if count * 2 > len(answers)), None)
    elif quorum == "unanimous":
        winner = answers[0] if len(counts) == 1 else None
    else:
        reaching = [verdict for verdict, count in counts.items() if count >= int(quorum)]
        winner = reaching[0] if len(reaching) == 1 else None
    if winner is not None:
        return Decision(winner, "quorum", counts, len(answers), needed)
    if tie == "cautious":
        return Decision(cautious, "tie_cautious", counts, len(answers), needed)
    if tie == "first":
        return Decision(answers[0], "tie_first", counts, len(answers), needed)
    return Decision(None, "no_winner", counts, len(answers), needed)


def spread(counts: dict[str, int]) -> float:
    """The share of answers that disagree with the most common one: 0 when all agree."""
    total = sum(counts.values())
    if not total:
        return 0.0
    return round(1 - max(counts.values()) / total, 4)
