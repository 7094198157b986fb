"""VerifyResponse under hostile input: the linear fence scan, and what the parse pool buys the event loop.

Every figure is a ratio of two measurements taken in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from functools import partial

from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.verify.fences import (
    CONTAINER_SCAN_MAX_CHARS,
    _container_blocks,
    _top_level_scan,
    needs_containers,
    scan_fences,
)
from verdict.verify.model import VerifyInput
from verdict.verify.verifier import Verifier

REFERENCE_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.DOTALL)
"""The reference verifier's fence regex: non-greedy, not line-anchored (and wrong on ~~~ and longer fences)."""

LINE_ANCHORED_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})([^\n]*)\n(.*?)^[ ]{0,3}\1[ \t]*$", re.DOTALL | re.MULTILINE)
"""A line-anchored fence regex that tries to follow CommonMark: the shape the issue timed at 23 s on 200 KB."""


def _best_of(repeats: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _all_matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    return list(pattern.finditer(text))


def _unclosed_with_opener_lines(size: int) -> str:
    """An unclosed ~~~ fence whose body is ```x lines: each one is a regex match attempt that runs to the end."""
    return "~~~\n" + "```x\n" * (size // 5)


def fence_scan() -> Iterator[str]:
    small, large = 12_000, 24_000
    for size in (small, large):
        text = _unclosed_with_opener_lines(size)
        assert len(scan_fences(text)) == 1
    texts = {size: _unclosed_with_opener_lines(size) for size in (small, large)}
    scanner = {size: _best_of(5, partial(scan_fences, text)) for size, text in texts.items()}
    anchored = {size: _best_of(1, partial(_all_matches, LINE_ANCHORED_FENCE, text)) for size, text in texts.items()}
    yield (
        f"unclosed fence of opener-like lines, {large // 1000} KB: line-anchored regex / linear scanner = "
        f"{anchored[large] / scanner[large]:,.0f}x"
    )
    yield (
        f"doubling the input ({small // 1000} -> {large // 1000} KB) multiplies the regex's time by "
        f"{anchored[large] / anchored[small]:.1f} (quadratic: 4) and the scanner's by "
        f"{scanner[large] / scanner[small]:.1f} (linear: 2)"
    )
    plain = "```python\n" + "x = 1\n" * 35_000
    reference = _best_of(5, partial(_all_matches, REFERENCE_FENCE, plain))
    ours = _best_of(5, partial(scan_fences, plain))
    yield (
        f"unclosed plain fence, {len(plain) // 1000} KB: reference regex / scanner = {reference / ours:.2f}x "
        "(the reference's regex is linear here, and misreads ~~~, longer and indented fences)"
    )


async def _max_loop_lag(verifier: Verifier, text: str, tick: float = 0.005) -> tuple[float, float]:
    """(largest gap between ticks beyond the tick itself, wall time) while `text` is verified."""
    lag = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal lag
        while not stop.is_set():
            before = time.perf_counter()
            await asyncio.sleep(tick)
            lag = max(lag, time.perf_counter() - before - tick)

    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(tick * 4)
    started = time.perf_counter()
    result = await verifier.verify(VerifyInput(text))
    elapsed = time.perf_counter() - started
    stop.set()
    await ticking
    assert result.verdict.value == "ok", result.detail
    return lag, elapsed


async def _loop_stall() -> list[str]:
    big = "```python\n" + "value = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" * 80_000 + "```"
    lines = []
    metrics = Metrics(CollectorRegistry())
    runner = Runner(metrics)
    limits = {"max_block_bytes": 8 * 1024 * 1024, "parse_workers": 1}
    inline = Verifier(Config(inline_parse_bytes=8 * 1024 * 1024, **limits), runner, metrics)  # type: ignore[arg-type]
    pooled = Verifier(Config(**limits), runner, metrics)  # type: ignore[arg-type]
    try:
        await pooled.verify(VerifyInput("```python\n" + "x = 1\n" * 10_000 + "```"))  # start the worker first
        inline_lag, inline_time = await _max_loop_lag(inline, big)
        pooled_lag, pooled_time = await _max_loop_lag(pooled, big)
    finally:
        inline.close()
        pooled.close()
    lines.append(
        f"3 MB Python block: longest event-loop stall inline / in the pool = {inline_lag / max(pooled_lag, 1e-4):,.0f}x"
        " "
        f"(inline the loop stalls for {inline_lag / inline_time:.0%} of the parse; in the pool for "
        f"{pooled_lag / pooled_time:.1%} of it)"
    )
    lines.append(
        f"3 MB Python block: wall time in the pool / inline = {pooled_time / inline_time:.2f}x (hand-off cost)"
    )
    return lines


def _nested_answer(items: int) -> str:
    """An answer of numbered steps, each with a list-item fence, a nested list and a quoted fence (~250 bytes each)."""
    return "".join(
        f"{i}. Step {i}: install and run it.\n\n   ```bash\n   pip install pkg{i}\n   ```\n\n"
        f"   - note: it prints\n\n     ```\n     ok {i}\n     ```\n\n> ```python\n> x = {i}\n> ```\n\n"
        for i in range(1, items + 1)
    )


def container_scan() -> Iterator[str]:
    """The container path (markdown-it-py's block parser) against the top-level scanner, and its scaling."""
    text = _nested_answer(400)
    assert needs_containers(text)
    assert len(text) <= CONTAINER_SCAN_MAX_CHARS
    assert len(scan_fences(text)) == 1200
    missed = 1200 - len(_top_level_scan(text, None).blocks)
    scanner = _best_of(5, partial(_top_level_scan, text, None))
    containers = _best_of(5, partial(_container_blocks, text))
    yield (
        f"nested answer, {len(text) // 1000} KB, 1,200 fences in list items and quotes: markdown-it-py block parse / "
        f"top-level scanner = {containers / scanner:.0f}x ({len(text) / containers / 1e6:.1f} MB/s, the scanner "
        f"{len(text) / scanner / 1e6:.0f} MB/s, which misses {missed} of the fences)"
    )
    hostile: dict[str, Callable[[int], str]] = {
        "quotes nested 20+ deep": lambda n: "".join(">" * (i % 40) + " ```x\n" for i in range(n)),
        "lists nested 30 deep": lambda n: "".join("  " * (i % 30) + "- ```\n" for i in range(n)),
        "one 100k-marker line": lambda n: "- " * (n * 4) + "```\n",
        "an unclosed list-item fence": lambda n: "- ```\n" + "  ```x\n" * n,
    }
    for name, shape in hostile.items():
        small, large = shape(8_000), shape(16_000)
        times = [_best_of(3, partial(_container_blocks, sample)) for sample in (small, large)]
        sizes = f"{len(small) // 1000} -> {len(large) // 1000} KB"
        yield f"{name}: doubling the input ({sizes}) multiplies the time by {times[1] / times[0]:.1f} (linear: 2)"


def run() -> list[str]:
    """Every measurement of this module, one line each."""
    return [*fence_scan(), *container_scan(), *asyncio.run(_loop_stall())]
