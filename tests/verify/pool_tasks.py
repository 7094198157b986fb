"""Pool functions for the verifier tests; pool workers import them by name, so they live in a module of their own.

A block whose code starts with `CRASH` kills its worker, `SLEEP <path>` touches `path` and sleeps, `NICE <path>`
writes the worker's nice value to `path`; anything else is checked for real.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from verdict.verify.checks import check_code
from verdict.verify.model import CodeCheck


def misbehaving_check(checker: str, code: str) -> CodeCheck:
    if code.startswith("CRASH"):
        os.kill(os.getpid(), signal.SIGKILL)
    if code.startswith("NICE"):
        Path(code.split()[1]).write_text(str(os.getpriority(os.PRIO_PROCESS, 0)))
    if code.startswith("SLEEP"):
        Path(code.split()[1]).touch()
        time.sleep(60)
    return check_code(checker, code)
