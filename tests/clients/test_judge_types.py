"""The clients' copies of the judge-backed evaluator types are generated from the server's records, and equal them.

Both clients pick a call's default deadline (the longer judge one or the short one) before the call goes out, from
the configuration alone, so they need the set at build time: asking ListEvaluators first would cost every first call
a round trip and fail when the catalogue cannot be reached. The records (`EvaluatorSpec.uses_judge` in
`verdict.evaluators.catalogue`) own the rule; the clients hold a generated copy, and this test fails when the copy
and the records part. Regenerate both files with:

    .venv/bin/python -m tests.clients.test_judge_types
"""

from __future__ import annotations

from pathlib import Path

from verdict.evaluators import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "clients" / "python" / "verdict_client" / "_judge_types.py"
TYPESCRIPT = ROOT / "clients" / "typescript" / "src" / "judgeTypes.ts"
REGENERATE = ".venv/bin/python -m tests.clients.test_judge_types"


def judge_types() -> list[str]:
    """The evaluator types the records say use a judge, sorted."""
    return sorted(kind for kind, record in CATALOGUE.items() if record.spec.uses_judge)


def python_source() -> str:
    names = ", ".join(f'"{kind}"' for kind in judge_types())
    return (
        '"""Generated from the server\'s evaluator records (`EvaluatorSpec.uses_judge`); do not edit.\n'
        "\n"
        f"Regenerate with `{REGENERATE}`;\n"
        "tests/clients/test_judge_types.py fails when this copy and the records part.\n"
        '"""\n'
        "\n"
        "JUDGE_TYPES = frozenset({" + names + "})\n"
        '"""Evaluator types that ask an LLM judge: they get the longer default deadline."""\n'
    )


def typescript_source() -> str:
    names = ", ".join(f'"{kind}"' for kind in judge_types())
    return (
        "// Generated from the server's evaluator records (`EvaluatorSpec.uses_judge`); do not edit.\n"
        f"// Regenerate with `{REGENERATE}`;\n"
        "// tests/clients/test_judge_types.py fails when this copy and the records part.\n"
        "\n"
        "/** Evaluator types that ask an LLM judge: they get the longer default deadline. */\n"
        f"export const JUDGE_TYPES: ReadonlySet<string> = new Set([{names}]);\n"
    )


def test_the_python_clients_copy_is_generated_from_the_records() -> None:
    assert PYTHON.read_text(encoding="utf-8") == python_source(), f"regenerate with {REGENERATE}"


def test_the_typescript_clients_copy_is_generated_from_the_records() -> None:
    assert TYPESCRIPT.read_text(encoding="utf-8") == typescript_source(), f"regenerate with {REGENERATE}"


def test_the_python_client_reads_the_generated_copy() -> None:
    """Every record's type, typed and as a block, gets the judge deadline exactly when the record uses a judge."""
    from verdict_client._calls import evaluator_config, uses_judge
    from verdict_client._proto.verdict.v1 import verdict_pb2

    assert judge_types(), "the records name at least one judge-backed type"
    for kind, record in CATALOGUE.items():
        typed = verdict_pb2.EvaluatorConfig()
        if record.spec.text_member:  # a member that carries another tool's configuration as text
            setattr(typed, kind, "")
        else:
            getattr(typed, kind).SetInParent()
        assert uses_judge(typed) is record.spec.uses_judge, kind
        assert uses_judge(evaluator_config({"type": kind})) is record.spec.uses_judge, kind


def test_the_typescript_client_reads_the_generated_copy() -> None:
    client = (ROOT / "clients" / "typescript" / "src" / "client.ts").read_text(encoding="utf-8")
    assert 'from "./judgeTypes"' in client
    assert [kind for kind in judge_types() if f'"{kind}"' in client] == [], "client.ts types out no judge type"


if __name__ == "__main__":
    PYTHON.write_text(python_source(), encoding="utf-8")
    TYPESCRIPT.write_text(typescript_source(), encoding="utf-8")
