"""The stall evaluators across sequences of calls, carrying the token: replays, interleaved loops, resets.

The stall arithmetic is checked on the pure functions; the token round trip (and its rejections) through
`Evaluations.evaluate`, exactly as a client would drive it. diff_stall against real git is in test_diffstat.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from verdict.errors import InvalidArgument
from verdict.evaluators import EvaluationInput, EvaluationResult, Evaluations, stall
from verdict.evaluators.catalogue import validate
from verdict.evaluators.model import Step


class Loop:
    """One client loop: sends its own token back on every call."""

    def __init__(self, evaluations: Evaluations, config: Mapping[str, Any]) -> None:
        self.evaluations = evaluations
        self.config = config
        self.token = b""

    async def step(
        self, output: str = "", context: Mapping[str, Any] | None = None, exit_code: int = 0
    ) -> EvaluationResult:
        request = EvaluationInput(self.config, output, exit_code, context or {}, state=self.token)
        result = await self.evaluations.evaluate(request)
        self.token = result.state
        return result


async def _verdicts(loop: Loop, outputs: Sequence[str]) -> list[str]:
    return [(await loop.step(output)).verdict for output in outputs]


# --- score_stall / open_question_stall: one score per call, the history folded into the token


@pytest.mark.parametrize(
    ("config", "scores", "verdicts"),
    [
        ({"type": "score_stall"}, ["5"], ["yes"]),
        ({"type": "score_stall"}, ["5", "5.4"], ["yes", "no"]),
        ({"type": "score_stall"}, ["5", "6", "6.4", "7.5"], ["yes", "yes", "no", "yes"]),
        ({"type": "score_stall", "max_stall": 2}, ["5", "5", "5", "9", "9"], ["yes", "yes", "no", "yes", "yes"]),
        ({"type": "score_stall", "epsilon": 0.0}, ["5", "5.01", "5.01"], ["yes", "yes", "no"]),
        ({"type": "score_stall"}, ["", "5", "oops", "5"], ["yes", "yes", "yes", "no"]),
        ({"type": "open_question_stall"}, ["10", "8", "7.8", "3"], ["yes", "yes", "no", "yes"]),
        ({"type": "open_question_stall", "max_stall": 2}, ["4", "4", "5", "4"], ["yes", "yes", "no", "no"]),
    ],
)
async def test_plateau_sequences(
    evaluations: Evaluations, config: dict[str, Any], scores: list[str], verdicts: list[str]
) -> None:
    assert await _verdicts(Loop(evaluations, config), scores) == verdicts


async def test_score_stall_small_gains_raise_the_best_but_count_as_stall(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "score_stall", "max_stall": 3})
    results = [await loop.step(score) for score in ("5", "5.3", "5.6", "5.9")]
    assert [r.details["best"] for r in results] == [5.0, 5.3, 5.6, 5.9]
    assert [r.details["stall_count"] for r in results] == [0, 1, 2, 3]
    assert results[-1].verdict == "no"
    assert results[-1].details == {"stall_count": 3, "max_stall": 3, "epsilon": 0.5, "rounds": 4, "best": 5.9}


async def test_plateau_matches_the_reference_fold_over_the_whole_history(evaluations: Evaluations) -> None:
    scores = [3.0, 7.0, 6.0, 7.2, 9.0, 8.9, 9.1, 9.3, 12.0, 11.0]
    loop = Loop(evaluations, {"type": "score_stall", "max_stall": 2})
    for seen in range(1, len(scores) + 1):
        result = await loop.step(str(scores[seen - 1]))
        assert (result.verdict, result.details) == _reference_score_stall(scores[:seen], max_stall=2, epsilon=0.5)


def _reference_score_stall(scores: list[float], *, max_stall: int, epsilon: float) -> tuple[str, dict[str, Any]]:
    """The reference's algorithm over a full history file, written out independently."""
    if len(scores) < 2:
        return "yes", {
            "stall_count": 0,
            "max_stall": max_stall,
            "epsilon": epsilon,
            "rounds": len(scores),
            "best": scores[-1] if scores else None,
        }
    best, count = scores[0], 0
    for score in scores[1:]:
        if score > best + epsilon:
            best, count = score, 0
        else:
            best = max(best, score)
            count += 1
    verdict = "no" if count >= max_stall else "yes"
    return verdict, {
        "stall_count": count,
        "max_stall": max_stall,
        "epsilon": epsilon,
        "rounds": len(scores),
        "best": best,
    }


async def test_skipped_output_leaves_the_token_unchanged(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "score_stall"})
    await loop.step("5")
    before = loop.token
    skipped = await loop.step("n/a")
    assert skipped.state == before
    assert skipped.details["skipped"] is True
    first = await Loop(evaluations, {"type": "score_stall"}).step("   ")
    assert first.state == b""
    assert first.details["best"] is None


async def test_nan_scores_follow_python_float_semantics(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "score_stall"})
    assert (await loop.step("nan")).details["best"] == "nan"
    second = await loop.step("100")
    assert second.verdict == "no", "nothing compares greater than NaN, as in the reference"


# --- action_stall


async def test_action_stall_sequence(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "action_stall"})
    same = {"context": {"action": "fix bug"}}
    first = await loop.step(context=same)
    assert (first.verdict, first.details) == (
        "yes",
        {"stall_count": 0, "max_repeat": 2, "hash_changed": True, "tracked_keys": ["action"]},
    )
    second = await loop.step(context=same)
    assert (second.verdict, second.details["stall_count"], second.details["hash_changed"]) == ("yes", 1, False)
    third = await loop.step(context=same)
    assert third.verdict == "no"
    assert third.details["stall_count"] == 2
    assert len(third.details["repeated_hash"]) == 32
    changed = await loop.step(context={"context": {"action": "write test"}})
    assert (changed.verdict, changed.details["stall_count"], changed.details["hash_changed"]) == ("yes", 0, True)


def _step(settings: dict[str, Any], context: dict[str, Any]) -> Step:
    from verdict.evaluators.interpolation import Namespaces

    return Step(validate(settings), namespaces=Namespaces.from_context(context))


@pytest.mark.parametrize(
    ("track", "context", "expected"),
    [
        (["action"], {"context": {"action": "a"}}, "action=a"),
        (["action"], {"captured": {"action": "c"}}, "action=c"),
        (["action"], {"prev": {"action": "p"}}, "action=p"),
        (["action"], {"result": {"action": "r"}}, "action=r"),
        (["action"], {"context": {"action": "a"}, "captured": {"action": "c"}}, "action=a"),
        (["action"], {}, "action="),
        (["prev.output", "context.n"], {"prev": {"output": "o"}, "context": {"n": 2.0}}, "prev.output=o|context.n=2"),
        (["prev.output"], {}, "prev.output="),
    ],
)
def test_action_stall_resolves_tracked_keys_like_the_reference(
    track: list[str], context: dict[str, Any], expected: str
) -> None:
    import hashlib

    judgement = stall.action_stall(_step({"type": "action_stall", "track": track}, context))
    assert judgement.state == {"h": hashlib.md5(expected.encode(), usedforsecurity=False).hexdigest(), "n": 0}


async def test_action_stall_never_errors_on_missing_keys(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "action_stall", "track": ["nowhere", "context.nothing"], "max_repeat": 1})
    assert [(await loop.step()).verdict for _ in range(3)] == ["yes", "no", "no"]


async def test_stall_types_read_their_own_exit_codes(evaluations: Evaluations) -> None:
    loop = Loop(evaluations, {"type": "action_stall", "max_repeat": 1})
    assert (await loop.step(exit_code=1)).verdict == "yes"
    assert (await loop.step(exit_code=2)).verdict == "no"
    scores = Loop(evaluations, {"type": "score_stall"})
    assert [(await scores.step(s, exit_code=1)).verdict for s in ("5", "5")] == ["yes", "no"]


# --- replays and independent loops


async def test_replayed_call_gives_the_same_answer_and_token(evaluations: Evaluations) -> None:
    config = {"type": "action_stall", "max_repeat": 2}
    context = {"context": {"action": "same"}}
    loop = Loop(evaluations, config)
    await loop.step(context=context)
    token = loop.token
    first = await evaluations.evaluate(EvaluationInput(config, "", 0, context, state=token))
    replay = await evaluations.evaluate(EvaluationInput(config, "", 0, context, state=token))
    assert first == replay
    score_first = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "4", state=b""))
    score_replay = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "4", state=b""))
    assert score_first == score_replay


async def test_two_loops_interleaved_do_not_share_state(evaluations: Evaluations) -> None:
    stuck = Loop(evaluations, {"type": "score_stall", "max_stall": 2})
    moving = Loop(evaluations, {"type": "score_stall", "max_stall": 2})
    outcomes = []
    for stuck_score, moving_score in [("5", "1"), ("5", "2"), ("5", "3"), ("5", "4")]:
        outcomes.append(((await stuck.step(stuck_score)).verdict, (await moving.step(moving_score)).verdict))
    assert outcomes == [("yes", "yes"), ("yes", "yes"), ("no", "yes"), ("no", "yes")]


async def test_two_action_loops_with_the_same_track_are_independent(evaluations: Evaluations) -> None:
    """The reference keyed `.loops/tmp` files by the tracked keys only, so these two loops shared one counter."""
    a = Loop(evaluations, {"type": "action_stall", "max_repeat": 1})
    b = Loop(evaluations, {"type": "action_stall", "max_repeat": 1})
    same = {"context": {"action": "x"}}
    assert (await a.step(context=same)).verdict == "yes"
    assert (await b.step(context=same)).verdict == "yes"
    assert (await a.step(context=same)).verdict == "no"
    assert (await b.step(context=same)).verdict == "no"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"type": "action_stall"}, {"type": "action_stall", "track": ["other"]}),
        ({"type": "score_stall"}, {"type": "score_stall", "epsilon": 1.0}),
        ({"type": "score_stall"}, {"type": "open_question_stall"}),
    ],
)
async def test_token_from_another_configuration_is_rejected(
    evaluations: Evaluations, first: dict[str, Any], second: dict[str, Any]
) -> None:
    token = (await evaluations.evaluate(EvaluationInput(first, "3"))).state
    assert token
    with pytest.raises(InvalidArgument) as raised:
        await evaluations.evaluate(EvaluationInput(second, "3", state=token))
    assert raised.value.field == "state"


async def test_threshold_changes_keep_the_token(evaluations: Evaluations) -> None:
    token = (await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "3"))).state
    result = await evaluations.evaluate(EvaluationInput({"type": "score_stall", "max_stall": 5}, "3", state=token))
    assert result.details["stall_count"] == 1
    assert result.verdict == "yes"


async def test_forged_payload_is_rejected(evaluations: Evaluations) -> None:
    from verdict.evaluators import state

    key = state.identity("action_stall", {"track": ["action"]})
    forged = state.encode("action_stall", key, {"h": "x", "n": -4})
    with pytest.raises(InvalidArgument):
        await evaluations.evaluate(EvaluationInput({"type": "action_stall"}, state=forged))


def _forged(evaluator: str, identity: dict[str, Any], payload: str) -> bytes:
    """A token in the right envelope and bound to the right configuration, with a hand-written payload."""
    from verdict.evaluators import state

    key = state.identity(evaluator, identity)
    return f'v1:{{"e":"{evaluator}","k":"{key}","s":{payload}}}'.encode()


_BIG = "1" + "0" * 400


@pytest.mark.parametrize(
    ("config", "identity", "payload"),
    [
        ({"type": "score_stall"}, {"epsilon": 0.5}, f'{{"r":1,"b":{_BIG},"n":0}}'),
        ({"type": "score_stall"}, {"epsilon": 0.5}, f'{{"r":2,"b":1.0,"n":{_BIG}}}'),
        ({"type": "score_stall"}, {"epsilon": 0.5}, f'{{"r":{_BIG},"b":1.0,"n":0}}'),
        ({"type": "action_stall"}, {"track": ["action"]}, f'{{"h":"x","n":{_BIG}}}'),
    ],
    ids=["huge-best", "huge-count", "huge-rounds", "huge-action-count"],
)
@pytest.mark.parametrize("output", ["5", ""])
async def test_forged_huge_numbers_are_invalid_argument(
    evaluations: Evaluations, config: dict[str, Any], identity: dict[str, Any], payload: str, output: str
) -> None:
    """A count or best past a double's range raised OverflowError (INTERNAL) here or when the details became a
    Struct; a token the server wrote never holds one."""
    with pytest.raises(InvalidArgument) as raised:
        await evaluations.evaluate(EvaluationInput(config, output, state=_forged(config["type"], identity, payload)))
    assert raised.value.field == "state"


@pytest.mark.parametrize(
    "extra",
    ['"x":"\\ud800"', '"x":[' + ",".join(["1e1"] * 900) + "]"],
    ids=["lone-surrogate", "grows-when-re-encoded"],
)
async def test_skipped_score_returns_a_well_formed_token(evaluations: Evaluations, extra: str) -> None:
    """A skipped score hands the state back; re-encoding the client's payload as it came (extra keys included) could
    not be encoded (a lone surrogate) or outgrew the token limit (`1e1` is written `10.0`): both were INTERNAL."""
    token = _forged("score_stall", {"epsilon": 0.5}, f'{{"r":1,"b":5.0,"n":0,{extra}}}')
    skipped = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "n/a", state=token))
    assert skipped.details["skipped"] is True
    following = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "5", state=skipped.state))
    assert (following.verdict, following.details["rounds"]) == ("no", 2)
