"""The fake judge refuses what the real CLIs refuse, with the text recorded from them (tests/judges/envelopes/), so a
wrong argv or environment fails in the unit tests the way it would against the real program."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.judges.support import FakeJudges, envelope


def run(fake_judges: FakeJudges, name: str, *argv: str, stdin: str = "prompt", **env: str) -> tuple[int, str]:
    fake_judges.install(name)
    completed = subprocess.run(
        [str(fake_judges.bin_dir / name), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={"PATH": fake_judges.path, "HOME": str(fake_judges.bin_dir), **env},
        timeout=30,
        check=False,
    )
    return completed.returncode, completed.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="claude refuses its bypass flag only as root")
def test_claude_bypass_flag_as_root_without_is_sandbox(fake_judges):
    rc, stderr = run(fake_judges, "claude", "--dangerously-skip-permissions", "--output-format", "json", "-p")
    assert (rc, stderr) == (1, envelope("claude-code", "root-refusal.stderr.txt"))
    rc, _ = run(fake_judges, "claude", "--dangerously-skip-permissions", "-p", IS_SANDBOX="1")
    assert rc == 0


def test_unknown_flags_get_each_clis_own_refusal(fake_judges):
    assert run(fake_judges, "claude", "--no-such-flag") == (1, envelope("claude-code", "unknown-flag.stderr.txt"))
    rc, stderr = run(fake_judges, "codex", "exec", "--no-such-flag", "-")
    recorded = envelope("codex", "unknown-flag.stderr.txt").splitlines()[1:]
    assert rc == 2
    assert stderr.splitlines() == recorded
    rc, stderr = run(fake_judges, "gemini", "--no-such-flag", "-p", "x")
    assert rc == 1
    assert stderr.splitlines()[0] == envelope("gemini", "unknown-flag.stderr.txt").splitlines()[0]


def test_gemini_with_credentials_refuses_an_untrusted_directory(fake_judges):
    rc, stderr = run(fake_judges, "gemini", "--output-format", "json", "-p", "x")
    assert rc == 55
    recorded = envelope("gemini", "untrusted-directory.stderr.txt")
    assert stderr.strip() in recorded
    assert run(fake_judges, "gemini", "--skip-trust", "-p", "x")[0] == 0


def test_a_missing_prompt_is_refused(fake_judges):
    assert run(fake_judges, "claude", "-p", stdin="")[0] == 1
    assert run(fake_judges, "codex", "exec", "-", stdin="") == (1, "No prompt provided via stdin.\n")
