"""The `verdict.verify` package as a script uses it: the offline call, no server, no grpc."""

from __future__ import annotations

import subprocess
import sys

import pytest

import verdict.verify
from verdict.verify import Verdict, verify_offline


def test_public_names_load_on_first_use() -> None:
    """The surface is pinned in tests/test_exports.py; here: a name off it is an AttributeError, not a stray."""
    assert verdict.verify.Verdict is Verdict
    with pytest.raises(AttributeError):
        _ = verdict.verify.check_code


def test_verify_offline_needs_no_server() -> None:
    assert verify_offline('```rust\nfn main() {\n    println!("hi");\n```\n').verdict is Verdict.MALFORMED
    assert verify_offline("```go\nfmt.Println(1)\n```", finish_reason="length").verdict is Verdict.TRUNCATED
    assert verify_offline("```bash\nls\n```\n").verdict is Verdict.UNVERIFIABLE  # bash -n needs the server


def test_a_script_can_verify_without_grpc() -> None:
    """The library call works from a plain script, and importing it pulls in neither grpc nor a grammar early."""
    script = (
        "import sys\n"
        "import verdict.verify\n"
        "assert 'tree_sitter' not in sys.modules\n"
        "from verdict.verify import verify_offline\n"
        "print(verify_offline('```java\\nclass A {\\n```\\n').verdict.value, 'grpc' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["malformed", "False"]
