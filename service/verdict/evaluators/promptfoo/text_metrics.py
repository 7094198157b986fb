"""The text metrics promptfoo's scored assertions compute, written from promptfoo's own definitions.

promptfoo does not call a library for BLEU or GLEU: it computes them itself, and a migrating team's thresholds were
tuned against those numbers, so they are reproduced here rather than swapped for sacrebleu's or nltk's (which
tokenize, smooth and pick references differently and give other scores on the same text):

- `bleu`: words are the lower-cased text split on whitespace; modified n-gram precision for n = 1..4, each clipped
  against the best reference; a zero precision counts as 1e-7; equal weights; the brevity penalty uses the
  reference whose length is closest to the candidate's.
- `gleu`: the same words with trailing full stops removed; per reference, min(precision, recall) over all 1..4-grams
  pooled; identical word lists score 1; the best reference wins; an empty candidate scores 0.
- `rouge_n`: the js-rouge ROUGE-N promptfoo calls with its defaults: n = 1 over a Treebank-style tokenization
  (words and punctuation, case kept), the share of the candidate's unigrams that occur in the reference.
- `levenshtein`: the edit distance (insertions, deletions, substitutions), by rapidfuzz.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

__all__ = ["bleu", "gleu", "levenshtein", "rouge_n"]

_TREEBANK = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def _ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _words(text: str) -> list[str]:
    return text.lower().strip().split()


def bleu(candidate: str, references: Sequence[str]) -> float:
    """promptfoo's sentence BLEU-4 (see the module docstring)."""
    words = _words(candidate)
    if not words or not references:
        return 0.0
    reference_words = [_words(reference) for reference in references]
    lengths = [len(ref) for ref in reference_words]
    closest = lengths[0]
    for length in lengths[1:]:
        if abs(length - len(words)) < abs(closest - len(words)):
            closest = length
    total = 0.0
    for n in range(1, 5):
        grams = _ngrams(words, n)
        counts = Counter(grams)
        best = 0
        for ref in reference_words:
            ref_counts = Counter(_ngrams(ref, n))
            best = max(best, sum(min(count, ref_counts[gram]) for gram, count in counts.items()))
        precision = best / len(grams) if grams else 0.0
        total += 0.25 * math.log(precision if precision > 0 else 1e-7)
    penalty = 1.0 if len(words) > closest else math.exp(1 - len(words) / closest) if closest else 1.0
    return penalty * math.exp(total)


def gleu(candidate: str, references: Sequence[str]) -> float:
    """promptfoo's GLEU (see the module docstring)."""
    if not candidate.strip() or not references:
        return 0.0

    def words(text: str) -> list[str]:
        return [re.sub(r"\.+$", "", word) for word in _words(text)]

    mine = words(candidate)
    scores = []
    for reference in references:
        theirs = words(reference)
        if mine == theirs:
            scores.append(1.0)
            continue
        matched = candidate_total = reference_total = 0
        for n in range(1, 5):
            grams, ref_grams = _ngrams(mine, n), _ngrams(theirs, n)
            ref_counts = Counter(ref_grams)
            matched += sum(min(count, ref_counts[gram]) for gram, count in Counter(grams).items())
            candidate_total += len(grams)
            reference_total += len(ref_grams)
        if candidate_total == 0 or reference_total == 0:
            scores.append(0.0)
        else:
            scores.append(min(matched / candidate_total, matched / reference_total))
    return max(scores)


def rouge_n(candidate: str, reference: str) -> float:
    """The js-rouge ROUGE-N with promptfoo's (default) options: the share of candidate unigrams found in the
    reference."""
    grams = _TREEBANK.findall(candidate)
    if not grams:
        return 0.0
    present = set(_TREEBANK.findall(reference))
    return sum(1 for gram in grams if gram in present) / len(grams)


def levenshtein(a: str, b: str, limit: int | None = None) -> int:
    """The Levenshtein edit distance; with `limit`, any distance above it comes back as limit + 1, which rapidfuzz
    computes in time proportional to limit × length instead of length × length (a 4 MB output against a short value
    stays cheap)."""
    return int(Levenshtein.distance(a, b, score_cutoff=limit))
