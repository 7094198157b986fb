"""State tokens: version 1 format, binding to evaluator and configuration, strict decoding."""

from __future__ import annotations

import json

import pytest

from verdict.errors import InvalidArgument
from verdict.evaluators import state


def test_format_is_versioned_compact_sorted_json() -> None:
    token = state.encode("action_stall", "abc", {"n": 1, "h": "x"})
    assert token == b'v1:{"e":"action_stall","k":"abc","s":{"h":"x","n":1}}'
    assert state.decode(token, "action_stall", "abc") == {"h": "x", "n": 1}


def test_empty_token_is_a_first_call() -> None:
    assert state.decode(b"", "score_stall", "k") is None


def test_identity_is_deterministic_and_distinguishes_configurations() -> None:
    a = state.identity("diff_stall", {"scope": ["src"], "workspace": "."})
    assert a == state.identity("diff_stall", {"workspace": ".", "scope": ["src"]})
    assert a != state.identity("diff_stall", {"scope": ["docs"], "workspace": "."})
    assert a != state.identity("action_stall", {"scope": ["src"], "workspace": "."})
    assert len(a) == 16


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (b"v2:{}", "not a version 1 token"),
        (b"garbage", "not a version 1 token"),
        (b"v1:{not json", "corrupt"),
        (b"v1:\xff\xfe", "corrupt"),
        (b"v1:[]", "corrupt"),
        (b'v1:{"e":"score_stall","k":"k","s":[]}', "corrupt"),
        (b'v1:{"e":"action_stall","k":"k","s":{}}', "belongs to a 'action_stall' evaluator"),
        (b'v1:{"e":"score_stall","k":"other","s":{}}', "another score_stall configuration"),
        (b"v1:" + b" " * 5000, "more than the 4096"),
    ],
)
def test_bad_tokens_are_invalid_argument(token: bytes, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message) as raised:
        state.decode(token, "score_stall", "k")
    assert raised.value.field == "state"
    assert raised.value.reason == "INVALID_STATE_TOKEN"


@pytest.mark.parametrize(
    ("payload", "reader", "name"),
    [
        ({"n": -1}, state.read_count, "n"),
        ({"n": True}, state.read_count, "n"),
        ({"n": "3"}, state.read_count, "n"),
        ({}, state.read_text, "h"),
        ({"b": "lots"}, state.read_number, "b"),
        ({"b": False}, state.read_number, "b"),
    ],
)
def test_payload_fields_are_checked(payload: dict[str, object], reader: object, name: str) -> None:
    with pytest.raises(InvalidArgument):
        reader(payload, name)  # type: ignore[operator]


def test_non_finite_numbers_round_trip() -> None:
    for value in (float("inf"), float("-inf")):
        assert state.read_number({"b": state.number(value)}, "b") == value
    nan = state.read_number({"b": state.number(float("nan"))}, "b")
    assert nan != nan
    json.dumps(state.number(float("nan")), allow_nan=False)
