"""VerifyResponse's engine: the pure rules, plus the three places a block can be parsed, plus metrics.

Where a block is parsed, and why:
- Every in-process language (`Runs.IN_PROCESS` in its record: Python, JSON, YAML, TOML, XML, the tree-sitter
  languages) up to `inline_parse_bytes` parses on the event loop: microseconds, no hand-off cost. The loop
  yields between blocks, so one response's many small blocks cannot hold it for long.
  One call may parse at most `inline_parse_budget_bytes` there in total (one budget for all the items of a batch):
  past it, its remaining small blocks parse in the parse pool too, so a response of 250 mid-sized blocks cannot hold
  the loop (and every other call and health check) for seconds; and at most `INLINE_PARSE_SECONDS` of CPU time, since
  bytes misjudge a parser's cost (PyYAML builds every value in Python). The budget is per call, not per block, because
  the stall other callers feel is the sum. A thread would not do: the pure-Python YAML parser and the GIL hand-over
  every 5 ms make each of the loop's many GIL acquisitions per call wait, and a health check then took 0.7 s.
- Larger ones parse in a pebble process pool (`parse_workers` processes, started with `spawn` on first use, so no
  fork of a threaded gRPC server). `ast.parse` holds the GIL for its whole run (a 3 MB block, over a second), as
  tree-sitter's error recovery can on a hostile megabyte, and a client deadline cannot interrupt either; in a worker
  it stalls nobody, `parse_timeout_seconds` bounds it, and a cancelled call (client gone, deadline passed) stops the
  worker. A timed-out or crashed worker makes the block unverifiable with the cause, and the pool starts a new one.
- A `Runs.SUBPROCESS` language (shell) runs its tool, `bash -n`, through the runner (the only door to child
  processes): argv list, stdin, empty environment, time limit, output cap, process-group kill.

A tool-calling turn (`tool_calls`, or tools declared) is checked by `_verify_tools`: the declared tools are compiled
through a bounded cache by schema digest (`tool_schemas.ToolSchemas`; a `tools_json` array is read once per digest
too), each call is checked on the event loop (tens of microseconds) unless its schema has regular expressions, which
run in a thread under the ReDoS bound, and the text is checked as prose by the same rules as any answer.

The blocks of one response are checked concurrently, at most `max_concurrent_shell_checks` bash processes and
`parse_workers` pool tasks at a time, so one response can neither overflow the runner's bash queue nor take the whole
pool queue for itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import hashlib
import logging
import multiprocessing
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessFuture, ProcessPool

from verdict.config.keys import Config
from verdict.errors import InvalidArgument, Unavailable
from verdict.metrics import Metrics
from verdict.runner import CHECK_NICENESS, Command, CommandNotFound, Runner, lower_priority, minimal_env, signal_name
from verdict.verify.checks import check_code
from verdict.verify.fences import FenceScan, needs_containers, scan_fences_bounded
from verdict.verify.languages import LANGUAGES, Runs
from verdict.verify.model import (
    BlockCheck,
    CodeCheck,
    SecondOpinionResult,
    ToolCheck,
    Verdict,
    Verification,
    VerifyInput,
)
from verdict.verify.rules import (
    NO_BLOCKS,
    TOOL_CALL_REASONS,
    TRUNCATION_REASONS,
    PendingCheck,
    aggregate,
    envelope_verdict,
    finish_reason_key,
    is_tool_turn,
    place,
    triage,
)
from verdict.verify.second_opinion import SecondOpinion
from verdict.verify.shell_syntax import BASH_ARGV, interpret_bash, shell_script
from verdict.verify.tool_calls import (
    NO_TOOLS,
    PROVIDER_MALFORMED_REASONS,
    Toolset,
    check_call,
    joined,
    markup_check,
    provider_check,
)
from verdict.verify.tool_markup import find_markup
from verdict.verify.tool_schemas import BoundedCache, SchemaRefused, ToolSchemas
from verdict.verify.tool_shapes import read_tools
from verdict.waiting import waiting_outside

__all__ = ["InlineBudget", "Verifier"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

SCAN_INLINE_CHARS = 64 * 1024
"""Texts up to this size are scanned for fences on the event loop (a few milliseconds at worst: 16k fence lines)."""

SCAN_INLINE_CONTAINER_CHARS = 8 * 1024
"""The same for texts whose fences sit in list items or quotes: markdown-it-py reads those at 0.3-1.5 MB/s."""

BASH_OUTPUT_CAP = 64 * 1024
"""Bytes of bash's stdout and stderr kept; its first error line is all a verdict needs."""

TOOL_SCHEMA_CACHE = 1024
"""Compiled tool schemas kept, by digest: agent loops with a few tool lists each compile each schema once."""

MAX_TOOLS = 1024
"""Most tools one turn may declare (providers accept 128 to 512); past it the request is INVALID_ARGUMENT."""

MAX_TOOL_CALLS = 1024
"""Most calls one turn may carry (models make a handful in parallel); past it the request is INVALID_ARGUMENT."""

INLINE_TOOL_CALLS = 16
"""Turns with up to this many calls are checked on the event loop (tens of microseconds each); more in a thread."""

TOOLSET_CACHE = 256
"""Whole tool lists kept (a `tools_json` array read and compiled, or a typed list), by the digest of the list."""


UNYIELDING_BYTES = 2048
"""An answer whose blocks total at most this many bytes is parsed in one event-loop step, without the yield before
each block: at the slowest measured parser (PyYAML, about 1 MB/s on flow mappings) that is two milliseconds."""

INLINE_PARSE_SECONDS = 0.008
"""CPU time one call may spend parsing blocks on the event loop, whatever their bytes: past it the call's remaining
blocks parse in the pool. Bytes alone misjudge the cost: PyYAML builds every value in Python, so 16 KB of flow
mappings took 12 ms where 16 KB of JSON takes 0.5 ms, and 4 such blocks inside the byte budget held the loop for
190 ms on a loaded machine. Thread CPU time, not wall time, so a machine under load (the loop preempted, not working)
does not push small answers' blocks into the pool, where each costs a hand-off. One call's inline stall is then at
most this plus one block (`inline_parse_bytes`)."""


@functools.lru_cache(maxsize=512)
def _metric_label(language: str) -> str:
    """The `lang` label of a block's language name, looked up once per name (the names are the caller's words, so
    the cache is bounded; the labels are few)."""
    return LANGUAGES.metric_label(language)


class InlineBudget:
    """What one call may still parse on the event loop: bytes of blocks, and CPU seconds (`INLINE_PARSE_SECONDS`).
    Shared by every item of a batch, because the stall other callers feel is the sum of a call's inline work, and
    past it the parse pool's processes use the cores the event loop cannot."""

    def __init__(self, left: int, seconds: float = INLINE_PARSE_SECONDS) -> None:
        self.left = left
        self.seconds = seconds

    def claim(self, size: int, limit: int) -> bool:
        """Whether a block of `size` bytes parses on the loop (at most `limit`, within what is left); if so its bytes
        are charged. Call `parse` in the same step (no await between), so the next claim sees the time it took."""
        if size > limit or size > self.left:
            return False
        self.left -= size
        return True

    def parse(self, language: str, code: str) -> CodeCheck:
        """Parse one claimed block on the event loop, charging the CPU time it took; once the time is spent no
        bytes are left either."""
        started = time.thread_time()
        try:
            return check_code(language, code)
        finally:
            self.seconds -= time.thread_time() - started
            if self.seconds <= 0:
                self.left = 0


class Verifier:
    """Verifies completions. One per server; `close()` stops the parse pool."""

    def __init__(
        self, config: Config, runner: Runner, metrics: Metrics, second_opinion: SecondOpinion | None = None
    ) -> None:
        self._config = config
        self._runner = runner
        self._metrics = metrics
        self._second_opinion = second_opinion
        self._pool: ProcessPool | None = None
        self._parsing: set[ProcessFuture[Any]] = set()
        self._closed = False
        self._counters: dict[tuple[str, ...], Any] = {}
        self._schemas = ToolSchemas(TOOL_SCHEMA_CACHE)
        self._toolsets: BoundedCache[bytes, Toolset | InvalidArgument] = BoundedCache(TOOLSET_CACHE)

    async def verify(
        self,
        request: VerifyInput,
        *,
        deadline: float | None = None,
        second_opinion: bool = True,
        inline_budget: InlineBudget | None = None,
    ) -> Verification:
        """The verdict on one completion. Raises Unavailable after `close()`; a failing checker is never an error.

        `second_opinion=False` skips the judge even when one is configured: the caller may not spend money on judges.
        `inline_budget` is shared by every completion of one call (a batch); by default each gets its own.
        """
        if self._closed:
            raise Unavailable("the verifier is closed")
        if (
            request.tool_calls
            or (request.declares_tools and not is_tool_turn(request))
            or finish_reason_key(request.finish_reason) in PROVIDER_MALFORMED_REASONS
        ):
            verification = await self._verify_tools(request, inline_budget)
        else:
            verification = envelope_verdict(request) or await self._verify_text(request, inline_budget)
        judge = self._second_opinion if second_opinion else None
        if (
            verification.verdict is Verdict.UNVERIFIABLE
            and judge
            and not is_tool_turn(request)
            and not request.tool_calls
        ):
            opinion = await self._ask_second_opinion(judge, request, verification, deadline)
            if opinion is not None:
                verification = dataclasses.replace(verification, second_opinion=opinion)
        self._count(("verdict", verification.verdict.value))
        for check in verification.checks:
            self._count(("block", _metric_label(check.language), check.verdict.value))
        for tool_check in verification.tool_checks:
            self._count(
                ("tool", self._metrics.tool_labels.fold(tool_check.name), tool_check.verdict.value, tool_check.reason)
            )
        return verification

    async def _verify_text(self, request: VerifyInput, inline_budget: InlineBudget | None) -> Verification:
        """The verdict on the text's fenced blocks (rules 4-6), once the envelope decided nothing."""
        scan = await self._scan(request.text)
        if not scan.total:
            return NO_BLOCKS
        # triage names broken closers with a few regex passes over the bodies: off the loop for large texts
        if len(request.text) <= SCAN_INLINE_CHARS:
            decided = triage(scan, self._config)
        else:
            decided = await asyncio.to_thread(triage, scan, self._config)
        budget = inline_budget or InlineBudget(self._config.inline_parse_budget_bytes)
        return aggregate(await self._check(decided, budget), scan.total)

    async def _verify_tools(self, request: VerifyInput, inline_budget: InlineBudget | None) -> Verification:
        """A turn with tool calls, or with tools declared: each call checked, the markup left in the text found, the
        text checked as prose (a calling turn's empty text is no answer to check, not an empty answer)."""
        if len(request.tool_calls) > MAX_TOOL_CALLS:
            raise InvalidArgument(
                f"{len(request.tool_calls)} tool calls; at most {MAX_TOOL_CALLS} are checked per turn",
                field="tool_calls",
            )
        toolset = await self._toolset(request)
        finish = finish_reason_key(request.finish_reason)
        cut = finish in TRUNCATION_REASONS
        limit = self._config.regex_timeout_seconds
        checks: list[ToolCheck] = []
        if len(request.tool_calls) > INLINE_TOOL_CALLS or toolset.needs_thread(request.tool_calls):
            checks = await asyncio.to_thread(_check_calls, request, toolset, cut, limit)
        else:
            checks = _check_calls(request, toolset, cut, limit)
        if finish in PROVIDER_MALFORMED_REASONS:
            checks.append(provider_check(len(checks), request.finish_reason))
        if toolset.declared and request.text.strip():
            text = request.text
            markups = (
                find_markup(text, toolset.tools)
                if len(text) <= SCAN_INLINE_CHARS
                else (await asyncio.to_thread(find_markup, text, toolset.tools))
            )
            checks.extend(markup_check(len(checks) + offset, markup) for offset, markup in enumerate(markups))
        prose: Verification | None
        if request.tool_calls or (finish in PROVIDER_MALFORMED_REASONS and not request.text.strip()):
            plain = dataclasses.replace(
                request,
                has_tool_calls=False,
                finish_reason="" if finish in TOOL_CALL_REASONS else request.finish_reason,
            )
            if not plain.text.strip() and not cut:
                prose = None
            else:
                prose = envelope_verdict(plain) or await self._verify_text(plain, inline_budget)
        else:
            prose = envelope_verdict(request) or await self._verify_text(request, inline_budget)
        return joined(prose, checks)

    async def _toolset(self, request: VerifyInput) -> Toolset:
        """The turn's declared tools, compiled: from the cache by the digest of the tools as sent, or read and
        compiled in a thread (tens of milliseconds for a typical list, once; the event loop keeps serving). Raises
        InvalidArgument naming the field of a tool the server cannot use (a refusal is cached too)."""
        if not request.declares_tools:
            return NO_TOOLS
        if request.tools_json:
            key = b"j" + hashlib.sha256(request.tools_json.encode("utf-8", "surrogatepass")).digest()
        else:
            digest = hashlib.sha256()
            for tool in request.tools:
                for part in (tool.name, tool.parameters):
                    encoded = part.encode("utf-8", "surrogatepass")
                    digest.update(len(encoded).to_bytes(8, "big") + encoded)
                digest.update(b"\x01" if tool.strict else b"\x00")
            key = b"t" + digest.digest()
        entry = self._toolsets.peek(key)
        self._count(("schema_cache", "miss" if entry is None else "hit"))
        if entry is None:
            entry = await asyncio.to_thread(self._compiled, request)
            self._toolsets.put(key, entry)
        if isinstance(entry, InvalidArgument):
            raise entry
        return entry

    def _compiled(self, request: VerifyInput) -> Toolset | InvalidArgument:
        try:
            definitions = read_tools(request.tools_json) if request.tools_json else request.tools
        except InvalidArgument as error:
            return error
        if len(definitions) > MAX_TOOLS:
            field = "tools_json" if request.tools_json else "tools"
            return InvalidArgument(f"{len(definitions)} tools; at most {MAX_TOOLS} may be declared", field=field)
        tools = {}
        for index, definition in enumerate(definitions):
            field = definition.field or f"tools[{index}].parameters"
            wire_field = "tools_json" if request.tools_json else field
            if not definition.name:
                name_field = "tools_json" if request.tools_json else f"tools[{index}].name"
                return InvalidArgument(f"{field.removesuffix('.parameters')}: the tool has no name", field=name_field)
            if definition.name in tools:
                name_field = "tools_json" if request.tools_json else f"tools[{index}].name"
                return InvalidArgument(
                    f"{field}: a second tool named {definition.name[:60]!r}; tool names must be unique",
                    field=name_field,
                )
            try:
                tools[definition.name], _ = self._schemas.compile(definition)
            except SchemaRefused as refused:
                return InvalidArgument(f"{field}: {refused}", field=wire_field, reason="INVALID_TOOL_SCHEMA")
        return Toolset(tools)

    @property
    def inline_parse_budget_bytes(self) -> int:
        """The per-call inline parse budget (`inline_parse_budget_bytes`)."""
        return self._config.inline_parse_budget_bytes

    def _count(self, key: tuple[str, ...]) -> None:
        """Increment the verdict or block-check counter child named by `key`, looked up once per label set (a
        `labels()` lookup costs several times the increment; the label sets are few and bounded)."""
        child = self._counters.get(key)
        if child is None:
            if key[0] == "verdict":
                child = self._metrics.verifications.labels(verdict=key[1])
            elif key[0] == "tool":
                child = self._metrics.tool_checks.labels(tool=key[1], verdict=key[2], reason=key[3] or "none")
            elif key[0] == "schema_cache":
                child = self._metrics.tool_schema_cache.labels(outcome=key[1])
            else:
                child = self._metrics.block_checks.labels(lang=key[1], verdict=key[2])
            self._counters[key] = child
        child.inc()

    def close(self) -> None:
        """Stop the parse pool and refuse further calls. Safe to call twice.

        A call still waiting on a parse gets Unavailable: a stopped pool never answers its tasks, so without that the
        call would wait forever. A call that was already past the `closed` check never starts a new pool.
        """
        self._closed = True
        self._discard_pool(Unavailable("the verifier closed while a block was being parsed"))

    async def _scan(self, text: str) -> FenceScan:
        """The fence scan; a large text is scanned in a thread, whose Python loop yields the GIL to the event loop."""
        if len(text) <= SCAN_INLINE_CONTAINER_CHARS or (len(text) <= SCAN_INLINE_CHARS and not needs_containers(text)):
            return scan_fences_bounded(text, self._config.max_checked_blocks)
        return await asyncio.to_thread(scan_fences_bounded, text, self._config.max_checked_blocks)

    def _pool_function(self) -> Callable[[str, str], CodeCheck]:
        """The pure function pool workers run; it must be importable by name in a fresh interpreter."""
        return check_code

    async def _check(self, plan: Sequence[BlockCheck | PendingCheck], budget: InlineBudget) -> list[BlockCheck]:
        """Every block's check, in the plan's order: the blocks triage decided as they are, the rest parsed.

        The common small answer (only inline parses, within the call's budget) is checked in one pass here: no task,
        semaphore, closure or gather per call, and no yield to the event loop unless its blocks total more than
        `UNYIELDING_BYTES` (a yield is a loop turn: a poll of the sockets and a trip behind every other ready callback,
        several times the parse of a short block). Anything else goes to `_check_concurrently`."""
        inline = self._config.inline_parse_bytes
        pending = []
        total = 0
        for item in plan:
            if isinstance(item, PendingCheck):
                size = item.size
                if item.language.record.runs is Runs.SUBPROCESS or size > inline:
                    return await self._check_concurrently(plan, budget)
                pending.append((item, size))
                total += size
        if total > budget.left:
            return await self._check_concurrently(plan, budget)
        yields = total > UNYIELDING_BYTES
        checked: list[BlockCheck] = []
        for position, (item, size) in enumerate(pending):
            if not budget.claim(size, inline):  # the call's inline time is spent: the rest go to the pool
                slots: dict[str, asyncio.Semaphore] = {}
                rest = [self._check_one(each, budget, slots) for each, _ in pending[position:]]
                checked.extend(await _all_or_none(rest))
                break
            if yields:
                await asyncio.sleep(0)
            checked.append(place(item, budget.parse(item.language.record.name, item.block.body)))
        return _in_plan_order(plan, checked)

    async def _check_concurrently(
        self, plan: Sequence[BlockCheck | PendingCheck], budget: InlineBudget
    ) -> list[BlockCheck]:
        """The general path: every pending block checked concurrently, each inline, in the pool or by its tool."""
        slots: dict[str, asyncio.Semaphore] = {}
        pending = [item for item in plan if isinstance(item, PendingCheck)]
        return _in_plan_order(plan, await _all_or_none([self._check_one(item, budget, slots) for item in pending]))

    async def _check_one(
        self, item: PendingCheck, budget: InlineBudget, slots: dict[str, asyncio.Semaphore]
    ) -> BlockCheck:
        """One pending block's check. `slots` holds the call's own share of each pool, made when a block first needs
        it (most answers need neither)."""

        def per_call(pool: str) -> asyncio.Semaphore:
            if pool not in slots:
                slots[pool] = self._runner.limit(pool, self._config).per_call()
            return slots[pool]

        code, record = item.block.body, item.language.record
        if record.runs is Runs.SUBPROCESS:
            async with per_call("bash"):
                return place(item, await self.SUBPROCESS_CHECKS[record.tool](self, code))
        await asyncio.sleep(0)
        # claimed and parsed in one step, no await between: the checks run concurrently, and each must see what the
        # ones before it spent, time included
        if budget.claim(item.size, self._config.inline_parse_bytes):
            return place(item, budget.parse(record.name, code))
        async with per_call("parse"):
            # a block too large for the loop parses for a while: the loop's place goes to another call meanwhile; a
            # small block sent to the pool because the call's inline budget is spent keeps it (its call is busy on
            # the loop, and lending there let more of such calls run at once under overload)
            lend = item.size > self._config.inline_parse_bytes
            return place(item, await self._check_in_pool(record.name, code, lend=lend))

    async def _check_shell(self, code: str) -> CodeCheck:
        # preparing the script (transcripts, stubs) is a Python pass over its lines: off the loop for large blocks
        script = shell_script(code) if len(code) <= SCAN_INLINE_CHARS else await asyncio.to_thread(shell_script, code)
        if not script.text.strip():
            return CodeCheck(Verdict.UNVERIFIABLE, "no commands left once prompts and output lines are dropped")
        try:
            completed = await self._runner.run(
                Command(
                    tool="bash",
                    argv=BASH_ARGV,
                    timeout=self._config.shell_check_timeout_seconds,
                    env=minimal_env(),
                    stdin=script.text.encode("utf-8", "replace"),
                    max_output_bytes=BASH_OUTPUT_CAP,
                    niceness=CHECK_NICENESS,
                )
            )
        except CommandNotFound:
            return CodeCheck(Verdict.UNVERIFIABLE, "bash is not installed here; shell blocks cannot be checked")
        return interpret_bash(
            script,
            completed.returncode,
            completed.stderr.decode("utf-8", "replace"),
            timed_out=completed.timed_out,
            signal_name=completed.signal_name,
        )

    SUBPROCESS_CHECKS: Mapping[str, Callable[[Verifier, str], Awaitable[CodeCheck]]] = {"bash": _check_shell}
    """The check of each `tool` a `Runs.SUBPROCESS` language record can name (languages.SUBPROCESS_TOOLS)."""

    async def _check_in_pool(self, language: str, code: str, *, lend: bool = False) -> CodeCheck:
        if self._closed:
            raise Unavailable("the verifier is closed")
        timeout = self._config.parse_timeout_seconds
        outcome = "crashed"
        try:
            future = self._running_pool().schedule(self._pool_function(), args=(language, code), timeout=timeout)
        except Exception as error:  # a pool that cannot start workers (a script without a __main__ guard, say)
            logger.warning("parse pool unavailable; starting a new one on the next call", exc_info=True)
            self._discard_pool(RuntimeError("the parse pool was replaced after a failure"))
            self._metrics.parse_pool_tasks.labels(outcome=outcome).inc()
            return CodeCheck(Verdict.UNVERIFIABLE, f"the parse pool is unavailable: {type(error).__name__}: {error}")
        self._parsing.add(future)
        future.add_done_callback(self._parsing.discard)
        try:
            async with waiting_outside() if lend else contextlib.nullcontext():
                result: CodeCheck = await asyncio.wrap_future(future)
            outcome = "ok"
            return result
        except (asyncio.CancelledError, Unavailable):  # wrap_future has cancelled the pool task: its worker stops
            outcome = "cancelled"
            raise
        except TimeoutError:
            outcome = "timeout"
            return CodeCheck(Verdict.UNVERIFIABLE, f"the parse took longer than {timeout:g}s; its worker was stopped")
        except Exception as error:
            if self._closed:  # the stopped pool failed the task first (BrokenProcessPool): the same closed verifier
                outcome = "cancelled"
                raise Unavailable("the verifier closed while a block was being parsed") from error
            if isinstance(error, ProcessExpired):
                return CodeCheck(Verdict.UNVERIFIABLE, f"the parse worker died ({_exit_cause(error.exitcode)})")
            logger.warning("parse pool task failed", exc_info=True)
            return CodeCheck(Verdict.UNVERIFIABLE, f"the parse pool failed: {type(error).__name__}: {error}")
        finally:
            self._metrics.parse_pool_tasks.labels(outcome=outcome).inc()

    async def in_pool(self, func: Callable[..., _T], *args: Any) -> _T:
        """Run a pure, picklable function (importable by name) in the parse pool, out of this process's GIL: for
        conversions of request parts so big that even a thread would stall the event loop (every GIL hand-over
        costs the loop up to 5 ms, and it needs many per call). Raises Unavailable after `close()`; the function's
        own exception, or TimeoutError past `parse_timeout_seconds`, otherwise."""
        if self._closed:
            raise Unavailable("the verifier is closed")
        future = self._running_pool().schedule(func, args=args, timeout=self._config.parse_timeout_seconds)
        self._parsing.add(future)
        future.add_done_callback(self._parsing.discard)
        result: _T = await asyncio.wrap_future(future)
        return result

    def _running_pool(self) -> ProcessPool:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPool(
                max_workers=self._config.parse_workers,
                context=context,
                initializer=lower_priority,
                initargs=(CHECK_NICENESS,),
            )
        return self._pool

    def _discard_pool(self, error: Exception) -> None:
        """Stop the pool and fail, with `error`, the parses it will now never answer."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()  # type: ignore[no-untyped-call]
            pool.join(timeout=5)
        for future in list(self._parsing):
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(error)

    async def _ask_second_opinion(
        self, judge: SecondOpinion, request: VerifyInput, verification: Verification, deadline: float | None
    ) -> SecondOpinionResult | None:
        """The judge's reading, or None. A judge that fails costs the caller nothing: the structural verdict stands."""
        try:
            return await judge.consider(request, verification, deadline=deadline)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("second opinion failed; keeping the structural verdict", exc_info=True)
            return None


def _check_calls(request: VerifyInput, toolset: Toolset, cut: bool, time_limit: float) -> list[ToolCheck]:
    """Every call's check, in order: pure, so it runs on the loop or, for schemas with patterns, in a thread."""
    return [
        check_call(index, call, toolset, cut=cut, time_limit=time_limit, clock=time.monotonic)
        for index, call in enumerate(request.tool_calls)
    ]


def _in_plan_order(plan: Sequence[BlockCheck | PendingCheck], checked: Sequence[BlockCheck]) -> list[BlockCheck]:
    """The plan with each pending block replaced by its check (`checked` holds them in the plan's order)."""
    done = iter(checked)
    return [item if isinstance(item, BlockCheck) else next(done) for item in plan]


async def _all_or_none(checks: Sequence[Awaitable[BlockCheck]]) -> list[BlockCheck]:
    """Every result, or the first exception with the other checks cancelled (no bash or pool task left behind)."""
    tasks: list[asyncio.Future[Any]] = [asyncio.ensure_future(check) for check in checks]
    try:
        results: list[BlockCheck] = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return results


def _exit_cause(exitcode: int | None) -> str:
    return signal_name(exitcode) or f"exit code {exitcode}"
