"""The judge host records: every record is complete and reachable, and every host list agrees with the records.

`record_problems` is the whole check, so the same function that passes the real records is shown failing a
deliberately incomplete one; docs/architecture.md ("A judge host", under "How to add") points here.
"""

from __future__ import annotations

import dataclasses
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.judges import fake_judge
from tests.judges.support import ENVELOPES, answer_stdout
from verdict.config.keys import Config
from verdict.errors import ConfigError
from verdict.judges import HOSTS, CliHost, HostRegistry, JudgeOutcome, JudgeRequest, JudgeService
from verdict.judges.clis import CLI_HOSTS, CREDENTIAL_VARIABLES, PROBE_ORDER, READERS
from verdict.judges.envelopes import EnvelopeError, JudgeReply
from verdict.judges.hosts import Invocation
from verdict.judges.payload import PayloadError, verdict_payload
from verdict.metrics import Metrics
from verdict.runner import Runner

DOCS = Path(__file__).parents[2] / "docs"
ANSWER = {"verdict": "yes", "confidence": 0.9, "reason": "the tests passed", "evidence": []}


def _executables(directory: Path, *names: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        program = directory / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(directory)


def record_problems(
    registry: HostRegistry, envelopes: Path, tmp_path: Path, success: Mapping[str, str] | None = None
) -> list[str]:
    """Everything that would make a host record unreachable or half-built.

    The registry's own check, plus reachability: selectable by name and, alone on a PATH, by the probe; in the probe
    order; an argv that starts with its binary and passes its credentials on; recorded envelopes under
    `envelopes/<name>/` that its reader reads without error; and, where `success` gives a success envelope carrying
    ANSWER, that the reader hands that answer back.
    """
    problems = registry.problems()
    for host in registry:
        try:
            if registry.named(host.name) is not host:
                problems.append(f"{host.name}: selecting it by name gives another record")
        except ConfigError as exc:
            problems.append(f"{host.name}: not selectable by name: {exc}")
        if host.name not in registry.probe_order:
            problems.append(f"{host.name}: missing from the probe order")
        alone = _executables(tmp_path / f"path-{host.name}", host.binary)
        if registry.select("", {"PATH": alone}) is not host:
            problems.append(f"{host.name}: the PATH probe does not find {host.binary}")
        problems += _invocation_problems(host)
        problems += _envelope_problems(host, envelopes / host.name)
        if success is not None:
            problems += _answer_problems(host, success.get(host.name))
    return problems


def _invocation_problems(host: CliHost) -> list[str]:
    secrets = {name: f"secret-{index}" for index, name in enumerate(host.credentials)}
    try:
        invocation = host.invocation("Judge this.", model="", schema=None, as_root=False, server_env=secrets)
    except Exception as exc:
        return [f"{host.name}: the builder fails: {exc!r}"]
    if not isinstance(invocation, Invocation) or invocation.argv[:1] != (host.binary,):
        return [f"{host.name}: the argv does not start with its binary {host.binary!r}"]
    if any(invocation.env.get(name) != value for name, value in secrets.items()):
        return [f"{host.name}: its credential variables are not passed to the CLI"]
    return []


def _envelope_problems(host: CliHost, directory: Path) -> list[str]:
    recorded = sorted(path for path in directory.glob("*") if not path.name.endswith(".stderr.txt"))
    if not recorded:
        return [f"{host.name}: no recorded envelope in {directory}"]
    problems = []
    for path in recorded:
        try:
            reply = host.read(path.read_text(), "")
        except EnvelopeError as exc:
            problems.append(f"{host.name}: its reader cannot read {path.name}: {exc.message}")
            continue
        if not isinstance(reply, JudgeReply) or reply.host != host.name:
            problems.append(f"{host.name}: reading {path.name} gives a reply that is not {host.name}'s")
    return problems


def _answer_problems(host: CliHost, stdout: str | None) -> list[str]:
    if stdout is None:
        return [f"{host.name}: no success envelope to carry an answer"]
    try:
        payload = verdict_payload(host.read(stdout, ""))
    except (EnvelopeError, PayloadError) as exc:
        return [f"{host.name}: the answer in its success envelope is lost: {exc}"]
    return [] if payload == ANSWER else [f"{host.name}: its reader changes the answer: {payload}"]


def test_every_host_record_is_complete_and_reachable(tmp_path: Path) -> None:
    success = {host.name: answer_stdout(host.name, ANSWER) for host in HOSTS}
    assert record_problems(HOSTS, ENVELOPES, tmp_path, success) == []


def _toy_reader(stdout: str, stderr: str) -> JudgeReply:
    raise EnvelopeError("parse_error", "the toy reads nothing")


def _toy_builder(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    return Invocation(("toy-judge", "--json"), {}, prompt.encode())


def test_a_deliberately_incomplete_record_fails_the_check(tmp_path: Path) -> None:
    """The check is not vacuous: a toy record with a broken builder, a reader that reads nothing, no credentials,
    no recorded envelopes and a probe rank taken by claude is refused, each gap by name."""
    toy = CliHost(
        "toy",
        "toy",
        build=_toy_builder,
        read=_toy_reader,
        credentials=(),
        probe_rank=0,
        structured_output=False,
        prompt_on_stdin=True,
    )
    envelopes = tmp_path / "envelopes"
    (envelopes / "claude-code").mkdir(parents=True)
    (envelopes / "claude-code" / "success.json").write_text(
        (ENVELOPES / "claude-code/success-structured.json").read_text()
    )
    problems = record_problems(HostRegistry((HOSTS.by_name["claude-code"], toy)), envelopes, tmp_path)
    joined = "\n".join(problems)
    assert "'toy': no credential variables" in joined
    assert "more than one host has the probe rank 0" in joined
    assert "toy: the argv does not start with its binary 'toy'" in joined
    assert "toy: no recorded envelope" in joined
    assert not [problem for problem in problems if problem.startswith(("claude-code:", "'claude-code'"))]

    (envelopes / "toy").mkdir()
    (envelopes / "toy" / "success.json").write_text("{}")
    problems = record_problems(HostRegistry((dataclasses.replace(toy, probe_rank=1),)), envelopes, tmp_path)
    assert "toy: its reader cannot read success.json: the toy reads nothing" in problems


def test_every_host_list_is_derived_from_the_records() -> None:
    names = [host.name for host in HOSTS]
    assert list(CLI_HOSTS) == names
    assert sorted(PROBE_ORDER) == sorted(names)
    assert {name: host.credentials for name, host in CLI_HOSTS.items()} == CREDENTIAL_VARIABLES
    assert {name: host.read for name, host in CLI_HOSTS.items()} == READERS


def test_the_probe_order_is_claude_codex_gemini_omp_kimi_qwen() -> None:
    assert PROBE_ORDER == ("claude-code", "codex", "gemini", "omp", "kimi-code", "qwen")


def test_the_fake_judge_stands_in_for_every_record() -> None:
    assert {host.binary for host in HOSTS} <= set(fake_judge.CLIS)


def test_the_docs_table_lists_every_record() -> None:
    table = (DOCS / "judges.md").read_text()
    documented = set(re.findall(r"^\| `([a-z0-9-]+)`", table, flags=re.MULTILINE))
    assert {host.name for host in HOSTS} <= documented


def test_a_stub_host_is_refused_with_the_derived_list() -> None:
    with pytest.raises(ConfigError) as caught:
        HOSTS.named("pi")
    assert "no blocking JSON mode" in str(caught.value)
    assert ", ".join(host.name for host in HOSTS) in str(caught.value)


# --- A judge host (docs/architecture.md, "How to add"): one record plus its recorded envelope, no other table touched.

TOY_ENVELOPE = '{"toy_answer": {"verdict": "yes", "confidence": 0.9, "reason": "the tests passed", "evidence": []}}\n'


def _read_toy(stdout: str, stderr: str) -> JudgeReply:
    import json

    answer = json.loads(stdout).get("toy_answer")
    if not isinstance(answer, dict):
        raise EnvelopeError("empty_result", "Empty result field in toy response")
    return JudgeReply("toy", structured=answer)


def _build_toy(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    return Invocation((host.binary, "--json", *(("--model", model) if model else ())), {}, prompt.encode())


TOY = CliHost(
    "toy",
    "toy-judge",
    build=_build_toy,
    read=_read_toy,
    credentials=("TOY_API_KEY",),
    probe_rank=0,
    structured_output=False,
    prompt_on_stdin=True,
)


async def test_a_new_host_is_one_record_plus_its_recorded_envelope(tmp_path: Path) -> None:
    envelopes = tmp_path / "envelopes"
    (envelopes / "toy").mkdir(parents=True)
    (envelopes / "toy" / "success.json").write_text(TOY_ENVELOPE)
    registry = HostRegistry((TOY,))
    assert record_problems(registry, envelopes, tmp_path, {"toy": TOY_ENVELOPE}) == []

    # the toy CLI: prints its recorded envelope once it has read the prompt and seen its credential
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "toy-judge"
    program.write_text(
        f'#!/bin/sh\ncat > /dev/null\n[ "$TOY_API_KEY" = key ] || exit 3\ncat "{envelopes / "toy" / "success.json"}"\n'
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    metrics = Metrics(CollectorRegistry())
    runner = Runner(metrics)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "TOY_API_KEY": "key"}
    service = JudgeService(Config(), runner, metrics, env, scratch_root=tmp_path, hosts=registry)
    assert service.host is TOY  # found by the PATH probe of the toy registry
    answer = await service.ask(JudgeRequest("Judge this.", schema={"type": "object"}))
    assert answer.outcome is JudgeOutcome.OK, answer.error
    assert answer.payload == ANSWER
    assert answer.host == "toy"
    assert JudgeService(Config(judge_host="toy"), runner, metrics, env, hosts=registry).host is TOY
