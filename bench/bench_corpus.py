"""Per-language figures on the pinned corpus of real code: false positives, coverage, recall per breakage, speed.

The speed is intact code through `verify_offline` (fence scan, rules and parse) per second on one core, in this
process, over all intact samples and over those that parse cleanly (one parse; the rest try every fragment form and
recover from errors); the 2-core machine is shared, so it is a floor rather than a peak.
"""

from __future__ import annotations

from collections.abc import Iterator

from bench.corpus import CORPUS_PATHS, load, measure


def run() -> Iterator[str]:
    rows = load()
    yield f"{len(rows)} corpus rows ({', '.join(f'tests/corpus/{path.name}' for path in CORPUS_PATHS)})"
    yield (
        "| language | intact | false positives | coverage | broken | malformed recall | open cuts | truncation recall "
        "| MB/s | MB/s when ok |"
    )
    yield "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    measured = measure(rows)
    for language, figures in measured.items():
        yield (
            f"| {language} | {figures.intact} | {figures.false_positive_rate:.1%} | {figures.coverage:.1%} | "
            f"{figures.broken} | {figures.malformed_recall:.1%} | {figures.cut_open} | "
            f"{figures.truncation_recall:.1%} | {figures.megabytes_per_second:.1f} | "
            f"{figures.parsed_megabytes_per_second:.1f} |"
        )
    yield ""
    yield "| language | breakage | samples | caught (malformed) |"
    yield "|---|---|---:|---:|"
    for language, figures in measured.items():
        for kind, (total, caught) in sorted(figures.kinds.items()):
            yield f"| {language} | {kind} | {total} | {caught / total:.1%} |"
