"""One real Verdict server (`python -m verdict serve`) for the whole client test session, stopped in teardown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import ServerProcess, start_server_process, stop_server_process


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    running = start_server_process()
    yield running
    stop_server_process(running)
