#!/usr/bin/env python3
"""A stand-in judge CLI with a known error rate, installed as `claude` for tests through real processes.

It reads the prompt on stdin and the model from `--model`, as claude does, and answers with claude's real
structured-output envelope. What it answers comes from `standin.json` beside it:

  profiles   {model: {rate, seed, mode, delay}}: wrong on a case exactly when standins.wrong(case, seed, rate);
             mode answer | hang (never answers) | crash (dies by SIGSEGV) | garbage (not an envelope) | first
             (comparator: always prefers the output shown first)
  key        {sha256 of an output's text: "yes" | "no" | "win" | "lose"}: the label of a judged output (llm_structured)
             or of one side of a comparison; without an entry, a `RESULT: <truth>` line in the output is the label

Every call appends {model, started, ended} (time.monotonic) to `calls.jsonl` beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

HERE = Path(sys.argv[0]).resolve().parent


def wrong(case: int, seed: int, rate: float) -> bool:
    """The same rule as tests/judges/standins.py (this script runs alone, so it cannot import it)."""
    digest = hashlib.sha256(f"{seed}:{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def between(prompt: str, tag: str) -> str | None:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return found.group(1) if found else None


def digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()


def main() -> int:
    argv = sys.argv[1:]
    model = argv[argv.index("--model") + 1] if "--model" in argv else ""
    prompt = sys.stdin.read()
    started = time.monotonic()
    setup = json.loads((HERE / "standin.json").read_text())
    profile = setup["profiles"].get(model, {})
    key: dict[str, str] = setup.get("key", {})
    mode = profile.get("mode", "answer")
    if profile.get("delay"):
        time.sleep(float(profile["delay"]))
    if mode == "hang":
        time.sleep(3600)
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "garbage":
        print("Segmentation fault (core dumped)? no: just noise, not an envelope")
        return 0
    a, b, output = between(prompt, "output_a"), between(prompt, "output_b"), between(prompt, "action_output")
    text = output if output is not None else (a or "")
    case = int(digest(text)[:8], 16)
    is_wrong = wrong(case, int(profile.get("seed", 0)), float(profile.get("rate", 0.0)))
    answer: dict[str, object]
    if a is not None and b is not None:
        if mode == "first":
            answer = {"verdict_a": "yes", "verdict_b": "no", "confidence": 0.9, "reason": "A reads better"}
        else:
            a_wins = (key.get(digest(a)) == "win") != is_wrong
            verdicts = ("yes", "no") if a_wins else ("no", "yes")
            answer = {"verdict_a": verdicts[0], "verdict_b": verdicts[1], "confidence": 0.9, "reason": "compared"}
    else:
        marker = re.findall(r"RESULT: (\w+)", text)
        truth = key.get(digest(text)) or (marker[-1] if marker else "no")
        verdict = ("no" if truth == "yes" else "yes") if is_wrong else truth
        lines = [line for line in text.splitlines() if line.strip()]
        answer = {"verdict": verdict, "confidence": 0.9, "reason": "read the output", "evidence": lines[-1].strip()}
    envelope = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "",
        "total_cost_usd": 0.002,
        "usage": {"input_tokens": 900, "output_tokens": 40},
        "modelUsage": {model or "sonnet": {"inputTokens": 900, "outputTokens": 40, "costUSD": 0.002}},
        "structured_output": answer,
    }
    print(json.dumps(envelope))
    with (HERE / "calls.jsonl").open("a") as log:
        log.write(json.dumps({"model": model, "started": started, "ended": time.monotonic()}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
