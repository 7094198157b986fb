"""A typed Python client for Verdict (verdict.v1.VerdictService), sync and asyncio.

```python
from verdict_client import VerdictClient

with VerdictClient("dns:///verdict-headless.verdict.svc.cluster.local:50051") as verdict:
    result = verdict.verify_response(completion_text, finish_reason="stop")
    if result.failed:
        ...
    step = verdict.evaluate({"type": "action_stall", "max_repeat": 2}, context={"context": {"action": "ls"}}, state=b"")
```

Defaults: a deadline on every call, UNAVAILABLE retried by gRPC's retry policy, round_robin over every address of
the target, keepalive inside servers' default limits, 4 MiB messages, plaintext unless a `TlsConfig` is given. Every
failure raises `VerdictRpcError` with the status code and the server's ErrorInfo and BadRequest details.
"""

from verdict_client.aio import AsyncVerdictClient
from verdict_client.client import VerdictClient
from verdict_client.config import ClientConfig, Keepalive, RetryPolicy, TlsConfig
from verdict_client.errors import FieldViolation, VerdictRpcError
from verdict_client.results import (
    BlockCheck,
    Evaluation,
    EvaluatorCatalogue,
    SecondOpinion,
    ToolCallCheck,
    Verification,
    VerifyVerdict,
)

__all__ = [
    "AsyncVerdictClient",
    "BlockCheck",
    "ClientConfig",
    "Evaluation",
    "EvaluatorCatalogue",
    "FieldViolation",
    "Keepalive",
    "RetryPolicy",
    "SecondOpinion",
    "TlsConfig",
    "ToolCallCheck",
    "VerdictClient",
    "VerdictRpcError",
    "Verification",
    "VerifyVerdict",
]
