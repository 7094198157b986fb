"""Agreement in production: how often panel members vote alike, over the last `window` questions, as gauges.

Calibration measures a judge against known answers now and then; agreement watches every panel question. A member
that starts disagreeing with the others (its model was updated, its host throttles it into garbage, it was always
weaker) shows as a falling `verdict_judge_agreement_ratio` for its pairs and a falling
`verdict_judge_panel_agreement_ratio` for itself, before anyone reads a log. The window is per process; the
dashboard averages replicas.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Sequence
from typing import Any

from verdict.metrics import Metrics

__all__ = ["DEFAULT_WINDOW", "Agreement"]

DEFAULT_WINDOW = 200
"""Questions remembered per pair: enough that one odd ruling moves the ratio by half a percent, few enough that a
judge that went wrong an hour ago shows within the hour on a busy panel."""


class Agreement:
    """`record(panel, votes, verdict)` after each panel question; the gauges follow. `votes` are (judge label, vote
    or None) per member; `verdict` is the panel's (None when it gave none)."""

    def __init__(self, metrics: Metrics, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self._metrics = metrics
        self._window = window
        self._pairs: dict[tuple[str, str, str], deque[bool]] = {}
        self._members: dict[tuple[str, str], deque[bool]] = {}

    def record(self, panel: str, votes: Sequence[tuple[str, str | None]], verdict: str | None) -> None:
        answered = [(judge, vote) for judge, vote in votes if vote is not None]
        for (judge_a, vote_a), (judge_b, vote_b) in itertools.combinations(answered, 2):
            if judge_a == judge_b:
                continue
            first, second = sorted((judge_a, judge_b))
            key = (panel, first, second)
            ratio = self._add(self._pairs, key, vote_a == vote_b)
            self._metrics.judge_agreement.labels(panel=panel, judge_a=first, judge_b=second).set(ratio)
        if verdict is None:
            return
        for judge, vote in answered:
            ratio = self._add(self._members, (panel, judge), vote == verdict)
            self._metrics.judge_panel_agreement.labels(panel=panel, judge=judge).set(ratio)

    def ratio(self, panel: str, judge_a: str, judge_b: str) -> float | None:
        """The pair's agreement now, or None before they first both answered."""
        first, second = sorted((judge_a, judge_b))
        window = self._pairs.get((panel, first, second))
        return None if not window else sum(window) / len(window)

    def _add(self, windows: dict[Any, deque[bool]], key: Any, agreed: bool) -> float:
        window = windows.get(key)
        if window is None:
            window = windows[key] = deque(maxlen=self._window)
        window.append(agreed)
        return sum(window) / len(window)
