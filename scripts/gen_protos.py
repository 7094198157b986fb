"""Regenerate the Python stubs for protos/ (never edit the generated files by hand).

Two copies are generated from the same proto, because the server and the client are separate distributions:

- `service/verdict/v1/` for the server (`import verdict.v1`);
- `clients/python/verdict_client/_proto/verdict/v1/` for the standalone client, whose own imports are rewritten to
  that namespace, so installing the client never shadows or clashes with the server's `verdict` package.

`python scripts/gen_protos.py` writes both; `python scripts/gen_protos.py --check` regenerates into a scratch folder
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
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
GENERATED_PACKAGE = Path("verdict") / "v1"


class Target(NamedTuple):
    """One place the stubs are written to: the package that holds `verdict/v1`, and its dotted import prefix.

    (A NamedTuple, not a dataclass: tests load this script by path, outside sys.modules.)"""

    root: Path
    """The folder under which `verdict/v1/` is written."""
    prefix: str
    """The dotted package that contains `verdict` (empty for the server, where `verdict` is top-level)."""
    init_text: str
    """The docstring of each generated package's `__init__.py`."""

    def package(self, out_root: Path | None = None) -> Path:
        return (out_root or self.root) / GENERATED_PACKAGE


TARGETS = (
    Target(
        ROOT / "service",
        "",
        '"""Generated protobuf and gRPC stubs for verdict.v1. Regenerate with `make protos`; never edit."""\n',
    ),
    Target(
        ROOT / "clients" / "python" / "verdict_client" / "_proto",
        "verdict_client._proto",
        '"""The client\'s own copy of the verdict.v1 stubs (`make protos`; never edit)."""\n',
    ),
)


def generate(target: Target, out_root: Path) -> list[Path]:
    """Run protoc (from grpcio-tools) with the mypy-protobuf plugins into `out_root`; return the generated files."""
    protos = sorted(PROTO_ROOT.rglob("*.proto"))
    bindir = Path(sysconfig.get_path("scripts"))
    out_root.mkdir(parents=True, exist_ok=True)
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
    package = target.package(out_root)
    (package / "__init__.py").write_text(target.init_text)
    if target.prefix:
        (package.parent / "__init__.py").write_text(target.init_text)
        (out_root / "__init__.py").write_text(target.init_text)
    files = sorted(p for p in package.iterdir() if p.is_file() and p.name != "py.typed")
    if target.prefix:
        for path in files:
            text = path.read_text()
            path.write_text(text.replace("from verdict.v1 import", f"from {target.prefix}.verdict.v1 import"))
    return files


def check(target: Target) -> list[str]:
    """The generated files of one target that differ from a fresh generation (or should not be there)."""
    with tempfile.TemporaryDirectory() as scratch:
        fresh = generate(target, Path(scratch))
        committed = target.package()
        stale = [f.name for f in fresh if not (committed / f.name).exists() or not filecmp.cmp(f, committed / f.name)]
        extra = sorted({p.name for p in committed.glob("*_pb2*")} - {f.name for f in fresh})
        shutil.rmtree(scratch, ignore_errors=True)
    return [str((committed / name).relative_to(ROOT)) for name in stale + extra]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed stubs differ from the proto")
    args = parser.parse_args()
    if not args.check:
        for target in TARGETS:
            files = generate(target, target.root)
            print("generated:", ", ".join(str(f.relative_to(ROOT)) for f in files))
        return 0
    stale = [name for target in TARGETS for name in check(target)]
    if stale:
        print(f"generated stubs are stale: {stale}; run `make protos` and commit", file=sys.stderr)
        return 1
    print("generated stubs match the proto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
