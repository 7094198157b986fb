"""`verdict evaluators`: the evaluator catalogue, offline, as a table for people or JSON for tools.

The same answer as the ListEvaluators RPC (it is built by the same `catalogue_response`), from the records in this
installation, so a loop author can see which types, fields and verdicts exist without starting a server; `--target`
asks a running server instead (its version may differ from this one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["add_parser", "run", "table"]


def add_parser(subparsers: Any, input_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    parser = subparsers.add_parser(
        "evaluators",
        help="list the evaluator catalogue (types, fields, verdicts) without a server, as a table or JSON",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--format", choices=("table", "json"), default="table", help="a table for people (default) or JSON"
    )
    parser.add_argument("type", nargs="?", help="show one evaluator type only")
    input_arguments(parser)


def _catalogue(args: argparse.Namespace) -> Any:
    if args.target:
        from verdict.cli.calls import call
        from verdict.v1 import verdict_pb2

        return asyncio.run(call(args, "ListEvaluators", verdict_pb2.ListEvaluatorsRequest()))
    from verdict.cli.calls import local_components
    from verdict.rpc.messages import catalogue_response

    async def offline() -> Any:
        async with local_components() as components:  # configured like the server (a judge's default model)
            return catalogue_response(components.evaluations.catalogue())

    return asyncio.run(offline())


def table(evaluators: list[dict[str, Any]]) -> str:
    """One block per evaluator: its type and flags, its verdicts, then one line per field."""
    lines = []
    for info in evaluators:
        flags = [name for name in ("stateful", "uses_judge", "exit_code_aware", "open_verdicts") if info.get(name)]
        lines.append(f"{info['type']}" + (f"  [{', '.join(flags)}]" if flags else ""))
        lines.append(f"  {info.get('description', '')}")
        lines.append(f"  verdicts: {', '.join(info.get('verdicts', [])) or '(open)'}")
        fields = info.get("fields", [])
        width = max((len(field["name"]) for field in fields), default=0)
        for field in fields:
            value = field.get("default_value")
            default = f" = {json.dumps(value)}" if value not in (None, "") else ""
            required = " (required)" if field.get("required") else ""
            lines.append(f"    {field['name']:<{width}}  {field.get('type', '')}{default}{required}")
        lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from verdict.cli.jobs import as_json

    listing = as_json(_catalogue(args))
    evaluators = listing.get("evaluators", [])
    if args.type:
        evaluators = [info for info in evaluators if info["type"] == args.type]
        if not evaluators:
            known = ", ".join(info["type"] for info in listing.get("evaluators", []))
            print(f"verdict: no evaluator type {args.type!r}; the catalogue has {known}", file=sys.stderr)
            return 2
    if args.format == "json":
        print(json.dumps({"evaluators": evaluators}, indent=2))
    else:
        print(table(evaluators), end="")
    return 0
