"""The contract checks bite, the documented commands for other languages run as written, and the
README's tour (one call from Python, one from Node, one from the command line) works against a real server.

Already proved elsewhere: buf breaking bites (clients/typescript/test/contract.test.ts), the Python tour
(tests/test_readme.py), the grpcurl payloads of docs/clients.md (tests/test_contract.py). Proved here:
that `buf lint`'s COMMENTS rules fail an undocumented field, that either freshness check fails on drift, that the
Go/Java generation commands of docs/clients.md produce the files they promise, and the README's Node and
command-line tour.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from tests.support import ServerProcess, load_script, start_server_process, stop_server_process

ROOT = Path(__file__).resolve().parents[1]
PROTOS = ROOT / "protos"
PROTO = Path("verdict") / "v1" / "verdict.proto"
TS_CLIENT = ROOT / "clients" / "typescript"
BUF = TS_CLIENT / "node_modules" / ".bin" / "buf"
README = (ROOT / "README.md").read_text()
CLIENTS_DOC = (ROOT / "docs" / "clients.md").read_text()

needs_buf = pytest.mark.skipif(not BUF.is_file(), reason="buf is not installed: `make node-deps` (npm ci)")
needs_node = pytest.mark.skipif(
    shutil.which("node") is None or not (TS_CLIENT / "node_modules").is_dir(),
    reason="node and the TypeScript client's node_modules are needed: `make node-deps`",
)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    running = start_server_process()
    yield running
    stop_server_process(running)


def proto_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "protos"
    shutil.copytree(PROTOS, copy)
    return copy


def edit(protos: Path, old: str, new: str) -> None:
    path = protos / PROTO
    text = path.read_text()
    assert text.count(old) == 1, f"the test's edit must apply exactly once: {old!r}"
    path.write_text(text.replace(old, new))


# buf lint: STANDARD + COMMENTS, so an undocumented element fails.


@needs_buf
def test_buf_lint_passes_on_the_contract_and_fails_an_undocumented_field(tmp_path: Path) -> None:
    clean = subprocess.run([BUF, "lint"], cwd=PROTOS, capture_output=True, text=True, timeout=120, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    protos = proto_copy(tmp_path)
    edit(protos, "  string finish_reason = 2;\n", "  string finish_reason = 2;\n  string undocumented_extra = 99;\n")
    done = subprocess.run([BUF, "lint"], cwd=protos, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "undocumented_extra" in done.stdout + done.stderr
    assert "comment" in (done.stdout + done.stderr).lower()


@needs_buf
def test_buf_lint_fails_a_field_name_that_breaks_the_standard_rules(tmp_path: Path) -> None:
    protos = proto_copy(tmp_path)
    edit(
        protos,
        "  string finish_reason = 2;\n",
        "  // Documented, but not lower_snake_case.\n  string finishReason = 2;\n",
    )
    done = subprocess.run([BUF, "lint"], cwd=protos, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "finishReason" in done.stdout + done.stderr


# Generated code freshness: both checks fail on drift (and pass without it).


def test_python_stub_freshness_check_fails_on_drift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = load_script("gen_protos.py")
    monkeypatch.setattr(sys, "argv", ["gen_protos.py", "--check"])
    protos = proto_copy(tmp_path)
    monkeypatch.setattr(gen, "PROTO_ROOT", protos)
    assert gen.main() == 0, "an unchanged copy of the proto matches the committed stubs"
    edit(protos, "  string finish_reason = 2;\n", "  string finish_reason = 2;\n  // New.\n  string drifted = 99;\n")
    assert gen.main() == 1


@needs_node
def test_typescript_types_freshness_check_fails_on_drift(tmp_path: Path) -> None:
    package = tmp_path / "clients" / "typescript"
    (package / "src").mkdir(parents=True)
    shutil.copytree(TS_CLIENT / "scripts", package / "scripts")
    shutil.copytree(TS_CLIENT / "src" / "generated", package / "src" / "generated")
    (package / "node_modules").symlink_to(TS_CLIENT / "node_modules")
    protos = proto_copy(tmp_path)
    check = [shutil.which("node") or "node", str(package / "scripts" / "gen-types.mjs"), "--check"]
    fresh = subprocess.run(check, capture_output=True, text=True, timeout=120, check=False)
    assert fresh.returncode == 0, fresh.stderr
    edit(protos, "  string finish_reason = 2;\n", "  string finish_reason = 2;\n  // New.\n  string drifted = 99;\n")
    stale = subprocess.run(check, capture_output=True, text=True, timeout=120, check=False)
    assert stale.returncode == 1
    assert "stale" in stale.stderr


# docs/clients.md: the Go and Java commands, run as written.

PLUGINS = ("protoc", "protoc-gen-go", "protoc-gen-go-grpc", "grpc_java_plugin")
needs_plugins = pytest.mark.skipif(
    any(shutil.which(plugin) is None for plugin in PLUGINS),
    reason=f"the Go/Java code generators are not installed ({', '.join(PLUGINS)}; docs/clients.md says how)",
)


def _sh_block_after(marker: str) -> str:
    start = CLIENTS_DOC.index(marker)
    block = re.search(r"```sh\n(.*?)```", CLIENTS_DOC[start:], re.DOTALL)
    assert block is not None
    return block.group(1)


@needs_plugins
def test_documented_plain_protoc_commands_generate_go_and_java(tmp_path: Path) -> None:
    (tmp_path / "protos").symlink_to(PROTOS)
    script = _sh_block_after("Plain `protoc` works as well")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out" / "verdict" / "v1"
    for name in ("verdict.pb.go", "verdict_grpc.pb.go", "VerdictServiceGrpc.java"):
        assert (out / name).is_file(), name
    assert "func NewVerdictServiceClient" in (out / "verdict_grpc.pb.go").read_text()


@needs_buf
@needs_plugins
def test_documented_buf_generate_gives_the_files_the_docs_list(tmp_path: Path) -> None:
    assert "make other-stubs STUBS_OUT=/tmp/verdict-stubs      # = cd protos && buf generate -o" in CLIENTS_DOC
    done = subprocess.run(
        [BUF, "generate", "-o", str(tmp_path)], cwd=PROTOS, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    go = tmp_path / "go" / "verdict" / "v1"
    assert "package verdictv1" in (go / "verdict.pb.go").read_text()
    assert (go / "verdict_grpc.pb.go").is_file()
    assert (tmp_path / "java" / "com" / "example" / "verdict" / "v1" / "VerdictServiceGrpc.java").is_file()


# The README's tour: Node and the command line (Python is tests/test_readme.py).


@needs_node
def test_readme_node_snippet_runs_against_a_server(server: ServerProcess, tmp_path: Path) -> None:
    entry = TS_CLIENT / "dist" / "src" / "index.js"
    if not entry.is_file():
        pytest.skip("the TypeScript client is not built: `make node-client-test` or `npm run build`")
    snippet = re.search(r"```ts\n(.*?)```", README, re.DOTALL)
    assert snippet is not None
    code = snippet.group(1).replace('"@verdict/client"', f'"{entry.as_uri()}"')
    code = code.replace("localhost:50051", server.target)
    script = tmp_path / "tour.mjs"
    script.write_text(code)
    done = subprocess.run(
        [shutil.which("node") or "node", str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no", "the snippet's comment promises `no`"


def _readme_shell_lines() -> list[str]:
    blocks = re.findall(r"````sh\n(.*?)````", README, re.DOTALL)
    assert blocks
    joined = "".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


GRPCURL = re.compile(r"^grpcurl -plaintext(?: -d '(?P<payload>.+)')? localhost:50051 (?P<what>\S+)$")


def test_readme_grpcurl_calls_work_through_reflection(server: ServerProcess) -> None:
    calls = [match for line in _readme_shell_lines() if (match := GRPCURL.match(re.sub(r"\s+", " ", line)))]
    assert len(calls) == 3
    with grpc.insecure_channel(server.target) as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        for match in calls:
            if match["what"] == "list":
                services = ProtoReflectionDescriptorDatabase(channel).get_services()
                assert "verdict.v1.VerdictService" in services
                continue
            service_name, method_name = match["what"].rsplit("/", 1)
            method = pool.FindServiceByName(service_name).FindMethodByName(method_name)
            request = message_factory.GetMessageClass(method.input_type)()
            json_format.Parse(match["payload"], request)
            call = channel.unary_unary(
                f"/{service_name}/{method_name}",
                request_serializer=lambda message: message.SerializeToString(),
                response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
            )
            response = json_format.MessageToDict(call(request, timeout=30))
            if method_name == "VerifyResponse":
                assert response["verdict"] == "VERIFY_VERDICT_MALFORMED"
            else:
                assert response["verdict"] == "yes"
