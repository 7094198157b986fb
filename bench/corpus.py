"""The pinned verification corpus: where it lives, how it is checked."""

from __future__ import annotations

from pathlib import Path

CORPUS_PATH = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "verify.jsonl.xz"
CHECKSUM_PATH = CORPUS_PATH.with_name("verify.jsonl.xz.sha256")
