"""Print the rule groups of Verdict's PrometheusRule as a plain Prometheus rules file.

The PrometheusRule (deploy/monitoring/prometheusrule.yaml) is the one place the rules are written. A Prometheus
without the Operator, and `promtool check rules` / `promtool test rules`, want the plain `groups:` document inside
it; this prints exactly that, so the two can never drift apart.

    python deploy/monitoring/rules_file.py [PROMETHEUSRULE.yaml | -] > verdict-rules.yaml
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

__all__ = ["main", "rule_groups"]

DEFAULT_SOURCE = Path(__file__).with_name("prometheusrule.yaml")


def rule_groups(document: Any) -> dict[str, Any]:
    """The plain rules document (`{"groups": [...]}`) inside one PrometheusRule object."""
    if not isinstance(document, dict) or document.get("kind") != "PrometheusRule":
        raise ValueError("not a PrometheusRule")
    groups = document.get("spec", {}).get("groups")
    if not isinstance(groups, list) or not groups:
        raise ValueError("the PrometheusRule has no spec.groups")
    return {"groups": groups}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    source = args[0] if args else str(DEFAULT_SOURCE)
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        groups = rule_groups(yaml.safe_load(text))
    except ValueError as error:
        print(f"rules_file.py: {source}: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(f"# Generated from {Path(source).name} by rules_file.py; edit the PrometheusRule, not this.\n")
    yaml.safe_dump(groups, sys.stdout, sort_keys=False, width=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
