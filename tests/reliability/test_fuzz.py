"""Property-based fuzzing of both RPCs against a real server, at the message level and the protobuf-bytes level.

Every evaluator's configuration (typed and `yaml` forms, keys from the catalogue itself, values from a pool that has
broken naive code: non-finite numbers, 5000-digit integers, interpolation templates, deep nesting), state tokens,
contexts, workspaces, and judge replies (the fake judge prints whatever hypothesis draws). Whatever is sent, the
answer is a verdict or a caller's-fault status, never INTERNAL or UNKNOWN; each test then checks (fixture `fuzz`)
that no process of any call is left and that the server holds no more descriptors than before.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

import grpc
import yaml
from google.protobuf import json_format, message
from hypothesis import given
from hypothesis import strategies as st

from tests.judges.support import answer_stdout, envelope
from tests.reliability.support import FuzzServer
from verdict.evaluators.catalogue import SPECS
from verdict.v1 import verdict_pb2

PIECES = [
    "```",
    "~~~",
    "```python\n",
    "```json\n",
    "```yaml\n",
    "```bash\n",
    "```sh\n",
    "```pycon\n",
    "```console\n",
    ">>> ",
    "$ ",
    "\n",
    "    ",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    "<<EOF\n",
    "EOF\n",
    "$(",
    "`",
    "!Ref x",
    "a: b",
    "---\n",
    "def f(",
    "\t",
    "\x00",
    "\ufffd",
    "NaN",
    "9" * 5000,
    "1e309",
    "${context.x}",
    "${prev.output:default=3}",
    "$${x}",
    "${",
    "[[[[[[[[[[",
]
TEMPLATES = st.sampled_from(
    ["${context.x}", "${prev.output}", "${captured.a.exit_code}", "${", "$${x}", "${env.HOME}", "${context." * 50]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    TEMPLATES,
    st.sampled_from(["eq", "gt", "le", "first", "last", "minimize", "(a|aa)+$", "[", ".a.b", "9" * 5000, "nan"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=30)), max_size=40).map("".join)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    """A configuration of one evaluator type: mostly its own keys (from the catalogue), sometimes a stray one."""
    kind = draw(st.sampled_from([*SPECS, "bogus"]))
    keys = [field.name for field in SPECS[kind].fields] if kind in SPECS else []
    config: dict[str, Any] = {"type": kind}
    for key in draw(st.lists(st.sampled_from([*keys, "source", "stray"]), max_size=5, unique=True)):
        config[key] = draw(VALUES)
    return config


def evaluate_request(draw: Callable[..., Any], config: dict[str, Any]) -> verdict_pb2.EvaluateRequest:
    request = verdict_pb2.EvaluateRequest(
        output=draw(TEXT),
        exit_code=draw(st.sampled_from([0, 0, 1, 124, 127, -9, 2**31 - 1])),
        state=draw(
            st.one_of(
                st.just(b""),
                st.binary(max_size=64),
                st.builds(lambda v: b"v1:" + json.dumps(v, default=str).encode(), VALUES),
                st.just(b"v1:" + b"{" * 200),
            )
        ),
        workspace=draw(st.one_of(st.just(""), st.just("repo"), st.text(max_size=300), st.just("a" * 300))),
    )
    context = draw(st.dictionaries(st.text(max_size=8), VALUES, max_size=3))
    with contextlib.suppress(ValueError, TypeError):
        request.context.update(context)
    typed = draw(st.booleans())
    if typed and config["type"] in SPECS:
        member = config["type"]
        try:
            json_format.ParseDict({member: {k: v for k, v in config.items() if k != "type"}}, request.config)
            return request
        except (json_format.ParseError, ValueError, TypeError, message.EncodeError):
            pass
    try:
        request.config.yaml = yaml.safe_dump(config, allow_unicode=True)
    except (yaml.YAMLError, ValueError, RecursionError):
        request.config.yaml = json.dumps(config, default=str)
    return request


@given(
    text=TEXT,
    finish_reason=st.sampled_from(["", "stop", "length", "tool_calls", "MAX_TOKENS", "max_tokens", "\x00"]),
    has_tool_calls=st.booleans(),
    completion_tokens=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_verify_response_messages(
    fuzz: FuzzServer, text: str, finish_reason: str, has_tool_calls: bool, completion_tokens: int
) -> None:
    request = verdict_pb2.VerifyResponseRequest(
        text=text, finish_reason=finish_reason, has_tool_calls=has_tool_calls, completion_tokens=completion_tokens
    )
    fuzz.call("VerifyResponse", request)
    assert fuzz.faults == []


@given(data=st.data())
def test_evaluate_messages_for_every_evaluator_config(fuzz: FuzzServer, data: st.DataObject) -> None:
    config = data.draw(configs())
    fuzz.call("Evaluate", evaluate_request(data.draw, config))
    assert fuzz.faults == []


@given(data=st.data())
def test_state_tokens_round_trip_or_are_refused(fuzz: FuzzServer, data: st.DataObject) -> None:
    """A stateful evaluator fed its own token back, then a mutated copy of it."""
    kind = data.draw(st.sampled_from(["action_stall", "score_stall", "open_question_stall", "convergence"]))
    config = verdict_pb2.EvaluatorConfig(yaml=f"type: {kind}")
    token = b""
    for output in data.draw(st.lists(TEXT, min_size=1, max_size=4)):
        answer = fuzz.call("Evaluate", verdict_pb2.EvaluateRequest(config=config, output=output, state=token))
        if isinstance(answer, verdict_pb2.EvaluateResponse):
            token = answer.state
    if token:
        position = data.draw(st.integers(min_value=0, max_value=len(token) - 1))
        mutated = token[:position] + bytes([token[position] ^ data.draw(st.integers(1, 255))]) + token[position + 1 :]
        fuzz.call("Evaluate", verdict_pb2.EvaluateRequest(config=config, output="x", state=mutated))
    assert fuzz.faults == []


@given(template=st.lists(st.one_of(TEMPLATES, st.text(max_size=10)), max_size=6).map("".join), context=VALUES)
def test_interpolation_templates(fuzz: FuzzServer, template: str, context: Any) -> None:
    for yaml_text in (
        f"type: output_numeric\noperator: eq\ntarget: {json.dumps(template)}",
        f"type: output_contains\npattern: {json.dumps(template)}",
        f"type: exit_code\nsource: {json.dumps(template)}",
    ):
        request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml=yaml_text), output="3")
        with contextlib.suppress(ValueError, TypeError):
            request.context.update({"x": context})
        fuzz.call("Evaluate", request)
    assert fuzz.faults == []


def _hostile_reply(draw: Callable[..., Any]) -> str:
    """What a judge CLI might print: a recorded envelope with a drawn answer, a mangled one, or noise."""
    answer = draw(
        st.dictionaries(st.sampled_from(["verdict", "confidence", "reason", "evidence", "verdict_a"]), VALUES)
    )
    shape = draw(st.sampled_from(["answer", "raw-answer", "mangled", "noise", "huge-number", "deep"]))
    if shape == "answer":
        try:
            return answer_stdout("claude-code", answer)
        except (ValueError, TypeError):
            return "{}"
    if shape == "raw-answer":
        return json.dumps(answer, default=str)
    if shape == "mangled":
        text = envelope("claude-code", "success-structured.json")
        cut = draw(st.integers(min_value=0, max_value=len(text)))
        return text[:cut] + draw(st.text(max_size=20)) + text[cut:]
    if shape == "huge-number":
        digits = draw(st.sampled_from([21, 400, 4301, 5000]))
        return envelope("claude-code", "success-structured.json").replace('"output_tokens": 85', f'"x": {"7" * digits}')
    if shape == "deep":
        depth = draw(st.integers(min_value=50, max_value=5000))
        return "[" * depth + "]" * depth
    return draw(TEXT)


@given(data=st.data())
def test_judge_replies(fuzz: FuzzServer, data: st.DataObject) -> None:
    """Whatever the judge prints, the verdict is a verdict (maybe `error`), never a server fault."""
    fuzz.judges.scenario({"stdout": _hostile_reply(data.draw), "rc": data.draw(st.sampled_from([0, 0, 0, 1]))})
    kind = data.draw(st.sampled_from(["llm_structured", "comparator", "contract"]))
    if kind == "llm_structured":
        config = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="ok?"))
    elif kind == "comparator":
        config = verdict_pb2.EvaluatorConfig(comparator=verdict_pb2.ComparatorConfig(baseline="old"))
    else:
        pair = verdict_pb2.ContractPair(producer="a", consumer="b", producer_content="{}", consumer_content="x")
        config = verdict_pb2.EvaluatorConfig(contract=verdict_pb2.ContractConfig(pairs=[pair]))
    fuzz.call("Evaluate", verdict_pb2.EvaluateRequest(config=config, output="ok"))
    assert fuzz.faults == []


METHODS = [
    ("/verdict.v1.VerdictService/VerifyResponse", "unary", verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```")),
    (
        "/verdict.v1.VerdictService/Evaluate",
        "unary",
        verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"), output="x"),
    ),
    ("/verdict.v1.VerdictService/ListEvaluators", "unary", verdict_pb2.ListEvaluatorsRequest()),
    ("/grpc.health.v1.Health/Check", "unary", None),
    ("/grpc.health.v1.Health/Watch", "server", None),
    ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", "bidi", None),
]


@given(
    method=st.sampled_from(METHODS),
    data=st.one_of(
        st.binary(max_size=200),
        st.builds(lambda n: b"\x0a" + bytes([n]) + b"\xff" * n, st.integers(1, 100)),
        st.just(b"\x0a\x02\xff\xfe"),
        st.just(b"\x22\x80\x80\x80\x80\x10"),
    ),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=4),
)
def test_protobuf_bytes_to_every_hosted_method(
    fuzz: FuzzServer, method: tuple[str, str, message.Message | None], data: bytes, flips: list[tuple[int, int]]
) -> None:
    """Random bytes, and valid requests with flipped bytes, to every method of every service the server hosts."""
    path, streaming, valid = method
    if valid is not None and flips:
        encoded = bytearray(valid.SerializeToString())
        for position, mask in flips:
            if encoded:
                encoded[position % len(encoded)] ^= mask
        data = bytes(encoded)
    code = fuzz.raw(path, data, streaming)
    assert code not in {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
    assert fuzz.faults == []
