"""Host argv, environment and stdin per CLI, and host selection (judge_host, LL_HOST_CLI, LL_HOOK_HOST, PATH)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from verdict.errors import ConfigError
from verdict.judges.clis import CLI_HOSTS, host_named, select_host
from verdict.judges.hosts import MAX_ARGUMENT_BYTES, HttpHost

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}


def invocation(host: str, prompt: str = "Judge this.", model: str = "sonnet", *, as_root: bool = True, env=None):
    return CLI_HOSTS[host].invocation(prompt, model=model, schema=SCHEMA, as_root=as_root, server_env=env)


def test_claude_takes_the_prompt_on_stdin_and_the_schema_as_json():
    call = invocation("claude-code")
    assert call.argv == (
        "claude",
        "--dangerously-skip-permissions",
        "--output-format",
        "json",
        "-p",
        "--model",
        "sonnet",
        "--json-schema",
        json.dumps(SCHEMA),
        "--no-session-persistence",
    )
    assert call.stdin == b"Judge this."
    assert call.env == {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1"}


def test_claude_is_told_it_is_sandboxed_only_when_running_as_root():
    assert "IS_SANDBOX" not in invocation("claude-code", as_root=False).env


def test_codex_reads_the_prompt_from_stdin_with_dash_and_keeps_no_session():
    call = invocation("codex", model="gpt-5-codex")
    assert call.argv == (
        "codex",
        "exec",
        "--dangerously-bypass-approvals-and-sandbox",
        "--json",
        "--skip-git-repo-check",
        "--ephemeral",
        "--model",
        "gpt-5-codex",
        "-",
    )
    assert call.stdin == b"Judge this."


@pytest.mark.parametrize("host", ["codex", "gemini", "qwen", "kimi-code", "omp"])
def test_a_claude_alias_is_not_passed_to_other_hosts(host):
    assert "sonnet" not in invocation(host, model="sonnet").argv
    assert "--model" not in invocation(host, model="sonnet").argv


def test_gemini_skips_the_trust_check_and_appends_a_closing_instruction_to_stdin():
    call = invocation("gemini", model="gemini-2.5-pro")
    assert call.argv == (
        "gemini",
        "--approval-mode",
        "yolo",
        "--output-format",
        "json",
        "--skip-trust",
        "--model",
        "gemini-2.5-pro",
        "-p",
        "Reply with the JSON object only.",
    )
    assert call.stdin == b"Judge this."
    assert "--json-schema" not in call.argv


def test_qwen_gets_the_schema_no_chat_recording_and_a_quiet_yolo():
    call = invocation("qwen", model="qwen3-coder-plus")
    assert call.argv[:6] == ("qwen", "--yolo", "--output-format", "stream-json", "--model", "qwen3-coder-plus")
    assert call.argv[6:] == (
        "--json-schema",
        json.dumps(SCHEMA),
        "--chat-recording",
        "false",
        "-p",
        "Reply with the JSON object only.",
    )
    assert call.env == {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
    assert call.stdin == b"Judge this."


def test_kimi_and_omp_take_the_prompt_as_an_argument_and_get_no_stdin():
    kimi = invocation("kimi-code", model="kimi-k2")
    assert kimi.argv == ("kimi", "--output-format", "stream-json", "--model", "kimi-k2", "-p", "Judge this.")
    assert kimi.stdin is None
    omp = invocation("omp", model="gpt-5")
    assert omp.argv == ("omp", "--mode", "json", "--no-session", "-p", "Judge this.", "--model", "gpt-5")
    assert omp.stdin is None


def test_an_argument_prompt_never_starts_like_a_flag():
    for host in ("kimi-code", "omp"):
        argv = invocation(host, "- is the output complete?").argv
        prompt = argv[argv.index("-p") + 1]
        assert not prompt.startswith("-")
        assert prompt.strip() == "- is the output complete?"


def test_a_large_prompt_is_measured_so_argv_hosts_can_refuse_it_before_exec():
    big = "x" * MAX_ARGUMENT_BYTES
    assert invocation("kimi-code", big).largest_argument >= MAX_ARGUMENT_BYTES
    assert invocation("claude-code", big).largest_argument < 1024


def test_only_the_hosts_credentials_and_proxy_settings_are_passed_on():
    server_env = {
        "ANTHROPIC_API_KEY": "sk-ant",
        "OPENAI_API_KEY": "sk-openai",
        "HTTPS_PROXY": "http://proxy:3128",
        "AWS_PROFILE_SECRET": "nope",
        "PYTHONPATH": "/somewhere",
    }
    claude = invocation("claude-code", env=server_env).env
    assert claude["ANTHROPIC_API_KEY"] == "sk-ant"
    assert claude["HTTPS_PROXY"] == "http://proxy:3128"
    assert "OPENAI_API_KEY" not in claude
    assert "PYTHONPATH" not in claude
    assert "AWS_PROFILE_SECRET" not in claude
    codex = invocation("codex", env=server_env).env
    assert codex == {"OPENAI_API_KEY": "sk-openai", "HTTPS_PROXY": "http://proxy:3128"}


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/chat/completions"),
        ("http://llm:11434/v1", "http://llm:11434/v1/chat/completions"),
        ("https://llm.internal/v1/chat/completions", "https://llm.internal/v1/chat/completions"),
    ],
)
def test_http_host_completions_url(base, url):
    assert HttpHost(base).completions_url == url


def test_host_named_accepts_registered_names_and_urls():
    assert host_named("claude-code") is CLI_HOSTS["claude-code"]
    assert host_named("kimi-code") == CLI_HOSTS["kimi-code"]
    assert CLI_HOSTS["kimi-code"].binary == "kimi"
    assert host_named("http://127.0.0.1:8080") == HttpHost("http://127.0.0.1:8080")


def test_a_binary_name_is_not_a_host_name_but_the_error_says_which_is():
    with pytest.raises(ConfigError, match="did you mean 'claude-code'") as caught:
        host_named("claude")
    assert caught.value.key == "judge_host"


@pytest.mark.parametrize("name", ["pi", "opencode"])
def test_stub_hosts_are_refused_at_startup(name):
    with pytest.raises(ConfigError, match="no blocking JSON mode"):
        host_named(name)


def test_unknown_hosts_and_bad_urls_are_refused():
    with pytest.raises(ConfigError, match="unknown judge host"):
        host_named("llama")
    with pytest.raises(ConfigError, match="not a usable URL"):
        host_named("http://")


@pytest.mark.parametrize("url", ["http://localhost:99999", "http://localhost:abc/v1", "http://[::1", "http://a b/"])
def test_a_url_that_cannot_be_connected_to_is_refused_at_startup(url):
    """These were accepted (or raised a bare ValueError), and every judge call on them was then INTERNAL."""
    with pytest.raises(ConfigError, match="not a usable URL") as caught:
        host_named(url, source="second_opinion_host")
    assert caught.value.key == "second_opinion_host"


def _executables(directory: Path, *names: str) -> str:
    for name in names:
        path = directory / name
        path.write_text("#!/bin/sh\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(directory)


def test_selection_prefers_the_setting_then_ll_host_cli_then_ll_hook_host(tmp_path):
    path = _executables(tmp_path, "claude")
    env = {"PATH": path, "LL_HOST_CLI": "gemini", "LL_HOOK_HOST": "qwen"}
    assert select_host("codex", env) is CLI_HOSTS["codex"]
    assert select_host("", env) is CLI_HOSTS["gemini"]
    assert select_host("", {"PATH": path, "LL_HOOK_HOST": "qwen"}) is CLI_HOSTS["qwen"]
    with pytest.raises(ConfigError) as caught:
        select_host("", {"LL_HOST_CLI": "claude"})
    assert caught.value.key == "LL_HOST_CLI"


def test_selection_probes_path_in_the_reference_order(tmp_path):
    assert select_host("", {"PATH": _executables(tmp_path, "qwen", "gemini", "kimi")}) is CLI_HOSTS["gemini"]
    other = tmp_path / "other"
    other.mkdir()
    assert select_host("", {"PATH": _executables(other, "omp", "codex", "pi")}) is CLI_HOSTS["codex"]


def test_selection_skips_the_pi_stub_and_finds_nothing_on_an_empty_path(tmp_path):
    assert select_host("", {"PATH": _executables(tmp_path, "pi")}) is None
    assert select_host("", {"PATH": ""}) is None
