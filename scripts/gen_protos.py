"""Regenerate the Python stubs for protos/ into service/verdict/v1 (never edit those files by hand).

`python scripts/gen_protos.py` writes them; `python scripts/gen_protos.py --check` regenerates into a scratch folder
and fails on any difference, so a proto change without regenerated stubs cannot land.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
OUT_ROOT = ROOT / "service"
GENERATED_PACKAGE = Path("verdict") / "v1"
INIT_TEXT = '"""Generated protobuf and gRPC stubs for verdict.v1. Regenerate with `make protos`; never edit."""\n'


def generate(out_root: Path) -> list[Path]:
    """Run protoc (from grpcio-tools) with the mypy-protobuf plugins; return the generated files."""
    # Only the contract's own files: google/rpc/status.proto is a vendored copy for buf and the TypeScript loader;
    # in Python the generated code imports googleapis-common-protos' google.rpc.status_pb2.
    protos = sorted((PROTO_ROOT / "verdict").rglob("*.proto"))
    bindir = Path(sysconfig.get_path("scripts"))
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"--plugin=protoc-gen-mypy={bindir / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={bindir / 'protoc-gen-mypy_grpc'}",
        f"--python_out={out_root}",
        f"--grpc_python_out={out_root}",
        f"--mypy_out={out_root}",
        f"--mypy_grpc_out={out_root}",
        *[str(p.relative_to(PROTO_ROOT)) for p in protos],
    ]
    subprocess.run(cmd, check=True, cwd=PROTO_ROOT)
    package = out_root / GENERATED_PACKAGE
    (package / "__init__.py").write_text(INIT_TEXT)
    return sorted(p for p in package.iterdir() if p.is_file() and p.name != "py.typed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed stubs differ from the proto")
    args = parser.parse_args()
    if not args.check:
        files = generate(OUT_ROOT)
        print("generated:", ", ".join(str(f.relative_to(ROOT)) for f in files))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        fresh = generate(Path(scratch))
        committed = OUT_ROOT / GENERATED_PACKAGE
        stale = [f.name for f in fresh if not (committed / f.name).exists() or not filecmp.cmp(f, committed / f.name)]
        extra = sorted({p.name for p in committed.glob("*_pb2*")} - {f.name for f in fresh})
        shutil.rmtree(scratch, ignore_errors=True)
    if stale or extra:
        print(f"generated stubs are stale: {stale + extra}; run `make protos` and commit", file=sys.stderr)
        return 1
    print("generated stubs match the proto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
