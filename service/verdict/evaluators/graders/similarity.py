"""text_similarity's metrics, each from a well-kept library and named with its version in the details.

| metric | implementation |
|---|---|
| fuzzy_match | rapidfuzz `fuzz.ratio` / 100: the normalized InDel similarity of the two texts |
| bleu | nltk `sentence_bleu`, whitespace tokens, one reference, BLEU-4 with smoothing method 1 (so a sentence
  without a shared 4-gram is not 0) and auto-reweighting (so an identical sentence under four words scores 1) |
| gleu | nltk `sentence_gleu`, whitespace tokens, one reference |
| rouge_1 … rouge_5, rouge_l | rouge-score's `RougeScorer` F-measure (its tokenizer: lower-case, alphanumeric runs) |
| meteor | refused: nltk's METEOR needs the WordNet corpus, which is not installed and would have to be downloaded |
| cosine | refused unless an embeddings endpoint is configured; this server configures none |

The golden vectors in the tests pin each metric's numbers to these library versions, so an upgrade that moves a
score fails a test instead of moving a team's pass rate. The libraries are imported on first use: nltk and
rouge-score take about 1.5 s to import, which a server that never sees a text_similarity grader should not pay.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

__all__ = ["INLINE_SIMILARITY_CHARS", "MAX_SIMILARITY_CHARS", "METRICS", "REFUSED", "implementation", "similarity"]

MAX_SIMILARITY_CHARS = 16 * 1024
"""Longest text (input or reference) a metric is computed on: rouge-score's ROUGE-L fills a words × words table in
pure Python and rapidfuzz's ratio is characters × characters / 64, so a request-sized text would hold a worker for
minutes. Beyond it the grader sets `truncated_observation_error`."""
INLINE_SIMILARITY_CHARS = 2 * 1024
"""Longer texts are scored in a worker thread, off the event loop."""


def _fuzzy(text: str, reference: str) -> float:
    from rapidfuzz import fuzz

    return float(fuzz.ratio(text, reference)) / 100


def _bleu(text: str, reference: str) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hypothesis, references = text.split(), [reference.split()]
    if not hypothesis or not references[0]:
        return 0.0
    return float(
        sentence_bleu(references, hypothesis, smoothing_function=SmoothingFunction().method1, auto_reweigh=True)
    )


def _gleu(text: str, reference: str) -> float:
    from nltk.translate.gleu_score import sentence_gleu

    hypothesis, references = text.split(), [reference.split()]
    if not hypothesis or not references[0]:
        return 0.0
    return float(sentence_gleu(references, hypothesis))


@cache
def _scorer(kind: str) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer([kind], use_stemmer=False)


def _rouge(kind: str) -> Callable[[str, str], float]:
    def score(text: str, reference: str) -> float:
        return float(_scorer(kind).score(reference, text)[kind].fmeasure)

    return score


METRICS: Mapping[str, tuple[Callable[[str, str], float], str, str]] = {
    "fuzzy_match": (_fuzzy, "rapidfuzz", "fuzz.ratio / 100"),
    "bleu": (_bleu, "nltk", "sentence_bleu, smoothing method1, auto_reweigh"),
    "gleu": (_gleu, "nltk", "sentence_gleu"),
    **{f"rouge_{n}": (_rouge(f"rouge{n}"), "rouge-score", f"rouge{n} fmeasure") for n in range(1, 6)},
    "rouge_l": (_rouge("rougeL"), "rouge-score", "rougeL fmeasure"),
}
"""Each served metric: its function (text, reference) -> score, the package that computes it, and how."""

REFUSED: Mapping[str, str] = {
    "meteor": "meteor needs nltk's WordNet corpus, which this server does not have and never downloads",
    "cosine": "cosine needs an embeddings endpoint, and this server has none configured",
}


def implementation(metric: str) -> dict[str, str]:
    """The package, its installed version and the function behind `metric`, for the details."""
    _, package, how = METRICS[metric]
    return {"package": package, "version": importlib.metadata.version(package), "function": how}


def similarity(metric: str, text: str, reference: str) -> float:
    """`metric`'s score of `text` against `reference`, between 0 and 1."""
    return METRICS[metric][0](text, reference)
