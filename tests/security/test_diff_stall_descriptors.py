"""diff_stall's descriptors are the server's choice, not the workspace's: a workspace with hundreds of untracked
directories, against a real server whose descriptor limit is low, still sees the file the agent changes every call
(one directory open at a time), and an open that fails for want of descriptors is `error`, never a file "gone"."""

from __future__ import annotations

import os
from pathlib import Path

import grpc

from tests.evaluators.test_diffstat import make_repo
from tests.support import lower_descriptor_limit, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

DIRECTORIES = 400
CALLS = 10


def test_a_workspace_of_many_directories_never_gives_a_false_stall(tmp_path: Path) -> None:
    root = tmp_path / "workspaces"
    repo = make_repo(root / "agent")
    for index in range(DIRECTORIES):
        (repo / f"d{index:03d}").mkdir()
        (repo / f"d{index:03d}" / "notes.txt").write_text("x\n")
    server = start_server_process("--workspace-root", str(root))
    try:
        # Room for the server and a git child, far from one descriptor per untracked directory.
        lower_descriptor_limit(server.process.pid, headroom=150)
        with grpc.insecure_channel(server.target) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            config = verdict_pb2.EvaluatorConfig(diff_stall=verdict_pb2.DiffStallConfig(max_stall=1))
            state = b""
            verdicts = []
            for call in range(CALLS):
                (repo / f"d{DIRECTORIES - 1:03d}" / "notes.txt").write_text(f"changed {call}\n")
                request = verdict_pb2.EvaluateRequest(config=config, workspace="agent", state=state)
                response = stub.Evaluate(request, timeout=60)
                state = response.state
                verdicts.append(response.verdict)
    finally:
        stop_server_process(server)
    assert verdicts == ["yes"] * CALLS, verdicts


def test_an_open_refused_for_want_of_descriptors_is_an_error_not_a_vanished_file() -> None:
    import errno

    import pytest

    from verdict.evaluators.diffstat import GitFailed
    from verdict.evaluators.fingerprint import _gone_or_fail

    assert _gone_or_fail(FileNotFoundError(errno.ENOENT, "gone"), "a") == b"gone"
    assert _gone_or_fail(OSError(errno.ELOOP, "a link now"), "a") == b"gone"
    for code in (errno.EMFILE, errno.ENFILE, errno.EACCES, errno.EIO):
        with pytest.raises(GitFailed):
            _gone_or_fail(OSError(code, os.strerror(code)), "a")
