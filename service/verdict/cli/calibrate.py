"""`verdict calibrate`: run labelled known-answer cases against the judges and say how far each can be trusted.

    verdict calibrate --cases deploy/calibration [--judge claude/sonnet ...] [--report report.json]
                      [--baseline earlier.json] [--config verdict.yaml]

The judges are `--judge host[/model]` or a named panel (repeatable), else `calibration_judges`, else the judge host,
every member of the named panels (`judge_panels_file`) and each panel as a unit; the cases are `--cases`, else
`calibration_path`. It prints one summary line per judge (accuracy, Cohen's kappa, malfunctions, comparator position
bias, cost, latency, drift) and writes the full JSON report (every case, the confusion counts) with `--report`. A
judge drifts when its kappa is under `calibration_kappa_floor` or fell more than `calibration_kappa_drop` from its
kappa in `--baseline`.

Exit status: 0 when no judge drifts, 1 when one does (a CI step or cron job can alert on it), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]

EXIT_OK, EXIT_DRIFT, EXIT_ERROR = 0, 1, 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="run labelled cases against the judges: accuracy, Cohen's kappa, position bias, drift",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("--config", help="YAML file of configuration keys, as for `verdict serve`")
    parser.add_argument("--cases", help="labelled cases: a YAML/JSON file or a directory (default calibration_path)")
    parser.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="HOST[/MODEL]|PANEL",
        help="a judge or named panel to calibrate (repeatable)",
    )
    parser.add_argument("--report", help="write the JSON report here")
    parser.add_argument("--baseline", help="an earlier JSON report: drift is measured from its kappas")
    parser.add_argument("--kappa-floor", type=float, help="override calibration_kappa_floor")
    parser.add_argument("--kappa-drop", type=float, help="override calibration_kappa_drop")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of the summary")


async def run(args: argparse.Namespace) -> int:
    from verdict.config.sources import load_config
    from verdict.errors import ConfigError
    from verdict.judges import calibrate_judges

    try:
        config = load_config(args.config, env=os.environ)
        run = await calibrate_judges(
            config,
            os.environ,
            cases_path=args.cases or "",
            judges=args.judge,
            baseline_path=args.baseline or "",
            floor=args.kappa_floor,
            drop=args.kappa_drop,
        )
    except (ConfigError, ValueError, OSError) as error:
        print(f"verdict: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.report:
        Path(args.report).write_text(json.dumps(run.document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(run.document, indent=2, sort_keys=True))
    else:
        print(summary(run.document), end="")
    return EXIT_DRIFT if run.drifting else EXIT_OK


def summary(document: dict[str, Any]) -> str:
    """One line per judge and evaluator, then the rule drift was judged by."""
    lines = [
        f"{'judge':<32} {'evaluator':<15} {'cases':>5} {'errors':>6} {'accuracy':>8} {'kappa':>6} {'bias':>5} "
        f"{'cost $':>8} {'ms':>6}  drift"
    ]
    for judge in document["judges"]:
        bias = "-" if judge["position_bias"] is None else f"{judge['position_bias']:.2f}"
        for evaluator, stats in judge["evaluators"].items():
            verdict = judge["drift"].get(evaluator, {})
            why = []
            if verdict.get("below_floor"):
                why.append("below floor")
            if verdict.get("dropped"):
                why.append(f"fell from {verdict['baseline']:.2f}")
            cases = stats["answered"] + stats["malfunctions"]
            lines.append(
                f"{judge['judge']:<32} {evaluator:<15} {cases:>5} {stats['malfunctions']:>6} "
                f"{stats['accuracy']:>8.3f} {stats['kappa']:>6.3f} "
                f"{bias if evaluator == 'comparator' else '-':>5} {judge['cost_usd']:>8.4f} "
                f"{judge['latency_ms']['mean']:>6.0f}  {'DRIFT: ' + ', '.join(why) if why else 'ok'}"
            )
    lines.append(f"kappa floor {document['kappa_floor']}, allowed drop {document['kappa_drop']}")
    return "\n".join(lines) + "\n"
