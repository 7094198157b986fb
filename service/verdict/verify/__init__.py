"""VerifyResponse: structural checks on a model completion that never execute it.

The public surface is what a script needs without a server: `verify_offline(text, finish_reason=...)`, the result
types, and the language records (`LANGUAGES`, `LanguageRecord`) that say what is checked.

Inside: `fences` finds the fenced blocks (CommonMark, linear), `languages` holds one record per language and routes
blocks, the `*_syntax` modules judge them (pure), `rules` applies the verdict rules (pure), `offline` runs it all in
the caller's thread, and `verifier.Verifier` runs it on the server: inline, in a process pool, or through `bash -n`.
This package's own import stays light (no grpc, no grammar): the public names load on first use, because pool
workers and other interpreters import single checkers (`verdict.verify.python_syntax`) through this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verdict.verify.languages import LANGUAGES, LanguageRecord, Languages, Runs
    from verdict.verify.model import BlockCheck, Verdict, Verification
    from verdict.verify.offline import verify_offline

__all__ = [
    "LANGUAGES",
    "BlockCheck",
    "LanguageRecord",
    "Languages",
    "Runs",
    "Verdict",
    "Verification",
    "verify_offline",
]

_HOMES = {
    "LANGUAGES": "languages",
    "LanguageRecord": "languages",
    "Languages": "languages",
    "Runs": "languages",
    "BlockCheck": "model",
    "Verdict": "model",
    "Verification": "model",
    "verify_offline": "offline",
}


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module 'verdict.verify' has no attribute {name!r}")
    return getattr(importlib.import_module(f"verdict.verify.{_HOMES[name]}"), name)
