"""Agreement statistics of a judge against labels: accuracy, Cohen's kappa, the confusion counts. Pure.

Accuracy alone flatters a judge on a lopsided set: on cases that are 90 % `yes`, a judge that always says yes is 90 %
accurate and has learnt nothing. Cohen's kappa corrects for the agreement chance alone would give,

    kappa = (p_observed - p_chance) / (1 - p_chance),   p_chance = sum over verdicts v of P(label v) * P(judge v)

so 1 is perfect agreement, 0 is no better than chance, below 0 worse than chance. A judge that is wrong on a share
e of balanced binary cases, at random, has kappa = 1 - 2e (0.6 at 20 %, 0.4 at 30 %).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Agreement", "agreement", "cohen_kappa"]


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's kappa of (label, judged) pairs. 1.0 when chance agreement is certain and every pair agrees, 0.0 when
    it is certain and some pair disagrees, and 0.0 for no pairs."""
    total = len(pairs)
    if not total:
        return 0.0
    observed = sum(label == judged for label, judged in pairs) / total
    labels = Counter(label for label, _ in pairs)
    judged = Counter(verdict for _, verdict in pairs)
    chance = sum(labels[verdict] * judged[verdict] for verdict in labels) / (total * total)
    if chance >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - chance) / (1 - chance)


@dataclass(frozen=True)
class Agreement:
    """A judge against the labels: over the `answered` cases (a malfunction is no answer, counted apart)."""

    answered: int
    malfunctions: int
    accuracy: float
    kappa: float
    confusion: dict[str, dict[str, int]]
    """confusion[label][judged]: how often a case labelled `label` was judged `judged`."""


def agreement(pairs: Sequence[tuple[str, str | None]]) -> Agreement:
    """The statistics of (label, judged or None for a malfunction) pairs."""
    answered = [(label, judged) for label, judged in pairs if judged is not None]
    confusion: dict[str, dict[str, int]] = {}
    for label, judged in answered:
        row = confusion.setdefault(label, {})
        row[judged] = row.get(judged, 0) + 1
    accuracy = sum(label == judged for label, judged in answered) / len(answered) if answered else 0.0
    return Agreement(
        answered=len(answered),
        malfunctions=len(pairs) - len(answered),
        accuracy=round(accuracy, 4),
        kappa=round(cohen_kappa(answered), 4),
        confusion=confusion,
    )
