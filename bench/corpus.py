"""The pinned verification corpus: real, intact code from installed packages and toolchains, and its breakages.

`tests/corpus/verify.jsonl.xz` (built by `bench/corpus_build.py`, pinned by `verify.jsonl.xz.sha256`) holds intact
samples as text and breakages as edits of them. `answers()` turns every row into the answer a model would give (prose
around one fenced block) and the verdict that answer deserves; `measure()` runs `verify_offline` on each and reports
per-language false positives, malformed recall, truncation recall and speed. The corpus test and `make bench` both
call it, so the figures in docs/verification.md are the ones the test asserts.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline

__all__ = [
    "CHECKSUM_PATH",
    "CORPUS_PATH",
    "CORPUS_PATHS",
    "LANGUAGES_PATH",
    "LONG_TAIL_PATH",
    "Answer",
    "Figures",
    "answers",
    "checksum_path",
    "load",
    "measure",
]

CORPUS_PATH = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "verify.jsonl.xz"
CHECKSUM_PATH = CORPUS_PATH.with_name("verify.jsonl.xz.sha256")
LONG_TAIL_PATH = CORPUS_PATH.with_name("verify-long-tail.jsonl.xz")
"""The second file: the languages added after the first was pinned (HTML, SQL), so its rows never move."""
LANGUAGES_PATH = CORPUS_PATH.with_name("verify-languages.jsonl.xz")
"""The third file: the grammar languages added after the second (Kotlin, Swift, Scala, Elixir, Lua, Haskell,
OCaml), built by `python -m bench.corpus_build --languages`."""
CORPUS_PATHS = (CORPUS_PATH, LONG_TAIL_PATH, LANGUAGES_PATH)


def checksum_path(path: Path) -> Path:
    """The file pinning `path`'s sha256."""
    return path.with_name(path.name + ".sha256")


EXPECTED = {
    "intact": None,
    "untagged": None,
    "cut_open": Verdict.TRUNCATED,
    "cut_closed": Verdict.MALFORMED,
    "drop_closer": Verdict.MALFORMED,
    "drop_quote": Verdict.MALFORMED,
    "drop_colon": Verdict.MALFORMED,
}
"""The verdict each kind of sample deserves (None: anything but a failure)."""


@dataclass(frozen=True)
class Answer:
    """One corpus row as a model's answer."""

    id: str
    language: str
    kind: str
    text: str
    code_bytes: int

    @property
    def expected(self) -> Verdict | None:
        return EXPECTED[self.kind]


def load(paths: tuple[Path, ...] = CORPUS_PATHS) -> list[dict[str, object]]:
    """The corpus rows of every file, after checking each pinned checksum (a changed file must be rebuilt and
    re-pinned)."""
    rows: list[dict[str, object]] = []
    for path in paths:
        packed = path.read_bytes()
        pinned = checksum_path(path).read_text().split()[0]
        digest = hashlib.sha256(packed).hexdigest()
        if digest != pinned:
            raise ValueError(f"{path.name} has sha256 {digest}, the pinned one is {pinned}")
        rows.extend(json.loads(line) for line in lzma.decompress(packed).decode().splitlines())
    return rows


def answers(rows: list[dict[str, object]]) -> Iterator[Answer]:
    """Every row as an answer: prose, one fenced block tagged as a model would tag it, prose (none after a cut)."""
    intact = {str(row["id"]): row for row in rows if "text" in row}
    for row in rows:
        base = intact[str(row.get("of", row["id"]))]
        code = str(base["text"])
        kind = str(row.get("kind", "intact"))
        data = code.encode()
        if kind in ("cut_open", "cut_closed"):
            code = data[: int(str(row["cut"]))].decode("utf-8", "replace")
        elif kind in ("drop_closer", "drop_quote", "drop_colon"):
            start, end = (int(value) for value in row["drop"])  # type: ignore[attr-defined]
            code = (data[:start] + data[end:]).decode("utf-8", "replace")
        if not code.endswith("\n"):
            code += "\n"
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"(?m)^\s*(`+)", code)), default=0))
        tag = "" if kind == "untagged" else base["tag"]
        opening = f"Here is the code you asked for:\n\n{fence}{tag}\n{code}"
        text = opening if kind == "cut_open" else f"{opening}{fence}\n\nIt keeps the existing behaviour.\n"
        language = f"untagged {base['lang']}" if kind == "untagged" else str(base["lang"])
        yield Answer(str(row["id"]), language, kind, text, len(code.encode()))


@dataclass
class Figures:
    """One language's measurements."""

    intact: int = 0
    false_positives: int = 0
    broken: int = 0
    malformed: int = 0
    cut_open: int = 0
    truncated: int = 0
    code_bytes: int = 0
    seconds: float = 0.0
    parsed_bytes: int = 0
    parsed_seconds: float = 0.0
    ok: int = 0
    """Intact samples that came back ok (the rest of the intact ones were unverifiable or false positives)."""
    kinds: dict[str, list[int]] = field(default_factory=dict)
    """Per breakage kind: [samples, caught as expected]."""
    misses: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        """The share of intact samples that came back ok: checked, not merely not charged."""
        return self.ok / self.intact if self.intact else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.intact if self.intact else 0.0

    @property
    def malformed_recall(self) -> float:
        return self.malformed / self.broken if self.broken else 1.0

    @property
    def truncation_recall(self) -> float:
        return self.truncated / self.cut_open if self.cut_open else 1.0

    @property
    def megabytes_per_second(self) -> float:
        """Intact code verified per second, whole pipeline (fence scan, rules, parse)."""
        return self.code_bytes / self.seconds / 1e6 if self.seconds else 0.0

    @property
    def parsed_megabytes_per_second(self) -> float:
        """The same, over the intact samples that came back ok (one clean parse: the common case in answers)."""
        return self.parsed_bytes / self.parsed_seconds / 1e6 if self.parsed_seconds else 0.0


def measure(rows: list[dict[str, object]]) -> dict[str, Figures]:
    """Per-language figures for the corpus, through `verify_offline` (one call per answer)."""
    figures: dict[str, Figures] = {}
    for answer in answers(rows):
        started = time.perf_counter()
        verdict = verify_offline(answer.text, finish_reason="stop").verdict
        elapsed = time.perf_counter() - started
        figure = figures.setdefault(answer.language, Figures())
        if answer.expected is None:
            figure.intact += 1
            figure.ok += verdict is Verdict.OK
            figure.code_bytes += answer.code_bytes
            figure.seconds += elapsed
            if verdict is Verdict.OK:
                figure.parsed_bytes += answer.code_bytes
                figure.parsed_seconds += elapsed
            if verdict.failed:
                figure.false_positives += 1
                figure.misses.append(f"{answer.id}: {verdict.value} on intact code")
        elif answer.kind == "cut_open":
            figure.cut_open += 1
            figure.truncated += verdict is Verdict.TRUNCATED
            if verdict is not Verdict.TRUNCATED:
                figure.misses.append(f"{answer.id}: {verdict.value} on an open cut")
        else:
            figure.broken += 1
            figure.malformed += verdict is Verdict.MALFORMED
            counts = figure.kinds.setdefault(answer.kind, [0, 0])
            counts[0] += 1
            counts[1] += verdict is Verdict.MALFORMED
            if verdict is not Verdict.MALFORMED:
                figure.misses.append(f"{answer.id}: {verdict.value} on a {answer.kind}")
    return figures
