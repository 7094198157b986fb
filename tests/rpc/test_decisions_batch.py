"""A batch call's decision record carries each item's verdict, or the code and reason the item alone failed with."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import make_config, serving
from verdict.v1 import verdict_pb2


async def test_a_batch_record_lists_every_item(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    config = make_config(decision_log="file", decision_log_path=str(log), max_message_bytes=2048)
    items = [
        verdict_pb2.VerifyResponseRequest(text='```json\n{"a": 1}\n```\n', finish_reason="stop"),
        verdict_pb2.VerifyResponseRequest(text="```python\ndef f(:\n```\n", finish_reason="stop"),
        verdict_pb2.VerifyResponseRequest(text="x" * 4096),  # over max_message_bytes: this item alone fails
    ]
    async with serving(config) as running:
        batch = verdict_pb2.BatchVerifyResponsesRequest(items=items)
        await running.stub.BatchVerifyResponses(batch, timeout=30)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    (record,) = [r for r in records if r["rpc"] == "BatchVerifyResponses"]
    results = record["result"]["items"]
    assert [item.get("verdict") for item in results[:2]] == ["ok", "malformed"]
    assert results[2] == {"code": "RESOURCE_EXHAUSTED", "reason": "REQUEST_TOO_LARGE"}
