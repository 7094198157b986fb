"""Fixtures shared by every test directory: a real server in-process, and one as a child process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support import Running, ServerProcess, make_config, serving, start_server_process, stop_server_process


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    """A started in-process server on 127.0.0.1:0 and a channel to it."""
    async with serving(make_config()) as result:
        yield result


@pytest.fixture
def server_process() -> Iterator[ServerProcess]:
    """`python -m verdict serve` as a child process on free ports, stopped with SIGTERM afterwards."""
    server = start_server_process()
    yield server
    stop_server_process(server)
