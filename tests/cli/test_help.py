"""Every flag and argument of every `verdict` command says what it does in `--help`."""

from __future__ import annotations

import argparse

from verdict.cli.main import build_parser


def _undocumented(parser: argparse.ArgumentParser, name: str) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                missing += _undocumented(sub, f"{name} {command}")
        elif not action.help or action.help == argparse.SUPPRESS:
            missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_flag_has_help_text() -> None:
    assert _undocumented(build_parser(), "verdict") == []


def test_the_flags_the_issue_found_bare_have_help_now() -> None:
    parser = build_parser()
    evaluate = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["evaluate"]
    helps = {option: action.help for action in evaluate._actions for option in action.option_strings}
    assert helps["--exit-code"]
    assert helps["--workspace"]
    assert helps["--state-file"]
