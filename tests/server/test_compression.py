"""BoundedGzip: what gzip.decompress accepts, in linear time, with a cap on members and on the inflated size."""

from __future__ import annotations

import gzip
import os

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from tests.support import growth
from verdict.server.compression import MAX_GZIP_MEMBERS, BoundedGzip

EMPTY_MEMBER = gzip.compress(b"")


@pytest.mark.parametrize("size", [1, 1000, 70_000, 1_000_000])
def test_one_member_inflates_as_gzip_does(size: int) -> None:
    data = os.urandom(size // 2) + b"a" * (size - size // 2)
    assert BoundedGzip().decompress(gzip.compress(data), 2 * size) == data


def test_a_few_members_are_joined_as_rfc_1952_says() -> None:
    body = b"".join(gzip.compress(part) for part in (b"one ", b"two ", b"three"))
    assert BoundedGzip().decompress(body, 1024) == b"one two three"


def test_compress_round_trips() -> None:
    assert gzip.decompress(BoundedGzip().compress(b"hello" * 100)) == b"hello" * 100


def test_more_members_than_the_cap_are_refused() -> None:
    with pytest.raises(ConnectError) as refused:
        BoundedGzip().decompress(EMPTY_MEMBER * (MAX_GZIP_MEMBERS + 1), 1024)
    assert refused.value.code == Code.INVALID_ARGUMENT
    assert f"more than {MAX_GZIP_MEMBERS} members" in refused.value.message


def test_inflating_past_the_limit_is_resource_exhausted() -> None:
    with pytest.raises(ConnectError) as refused:
        BoundedGzip().decompress(gzip.compress(b"\0" * 100_000), 1000)
    assert refused.value.code == Code.RESOURCE_EXHAUSTED


@pytest.mark.parametrize("body", [b"not gzip at all", gzip.compress(b"cut short" * 100)[:-9]])
def test_garbage_and_truncation_are_invalid_argument(body: bytes) -> None:
    with pytest.raises(ConnectError) as refused:
        BoundedGzip().decompress(body, 1024)
    assert refused.value.code == Code.INVALID_ARGUMENT


def test_the_time_is_linear_in_the_members_where_the_runtime_is_quadratic() -> None:
    """With the cap lifted, 8x the empty members costs about 8x: a member boundary copies one slice, not the rest of
    the body as the runtime's decoder does (scripts/gzip_members_reproducer.py measures that one)."""
    uncapped = BoundedGzip(max_members=10**9)

    def members(n: int) -> None:
        assert uncapped.decompress(EMPTY_MEMBER * n, 1024) == b""

    assert growth(members, 5000) < 32
