"""YAML blocks, checked by a safe loader that never builds an arbitrary object (reference §2.3, §3.2, §6.4).

`yaml.safe_load` is the wrong oracle for real YAML: it rejects every application tag (`!Ref`, `!Sub` in
CloudFormation, `!reference` in GitLab CI, `!REF` in gcloud, `!function` in lm-eval; 2,527 of 4,308 gcloud files) and
every multi-document stream. So the loader here is a SafeLoader subclass (the C one when libyaml is present: ten
times faster) that builds any tag it does not know as plain data (a string, list or mapping), and every document of a
stream is loaded.

What counts as what:
- a scanner, parser or composer error (bad indentation, an unclosed flow collection or quote, an undefined alias) is
  malformed, with the parser's own words and line;
- a constructor error (an unhashable mapping key, a bad merge, a `!!binary` that is not base64, a timestamp like
  2001-13-45) is unverifiable: the YAML is well-formed, PyYAML's safe constructor just cannot build it;
- a duplicate anchor is unverifiable: YAML allows redefining an anchor, PyYAML does not;
- a template (Helm / Jinja `{{ }}` or `{% %}` markers) that fails *where a marker stands* (on or next to the parser's
  problem or context position, outside quoted scalars) is unverifiable: it is not YAML until rendered. A marker
  anywhere else excuses nothing: lm-eval task files quote `"{{question}}"` and are plain YAML, so an unrelated error
  there is malformed; and GitHub Actions' `${{ ... }}` is an expression inside YAML, never a template;
- libyaml's nesting-depth limit, RecursionError and MemoryError are the parser giving up: unverifiable.

YAML truncation is mostly invisible to a parser (85 % of byte cuts still parse, reference §3.4): an unterminated fence
or the finish reason is what catches it.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from verdict.verify.excuses import blank_quoted, near
from verdict.verify.model import CodeCheck, Verdict

__all__ = ["check_yaml"]

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _TolerantLoader(_SafeLoader):
    """A safe loader that builds unknown tags as the plain data they decorate."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


_TolerantLoader.add_multi_constructor("", _plain)


def check_yaml(code: str) -> CodeCheck:
    """The verdict on one YAML block's code (every document of the stream). Pure; never raises."""
    try:
        for _ in yaml.load_all(code, Loader=_TolerantLoader):
            pass
    except yaml.MarkedYAMLError as error:
        return _marked(code, error)
    except yaml.reader.ReaderError as error:
        line = code.count("\n", 0, max(error.position, 0)) + 1
        character = error.character if isinstance(error.character, int) else ord(error.character[:1] or "\0")
        return CodeCheck(Verdict.MALFORMED, f"unacceptable character #x{character:04x}: {error.reason}", line)
    except yaml.YAMLError as error:
        return CodeCheck(Verdict.MALFORMED, str(error).split("\n", 1)[0])
    except (RecursionError, MemoryError) as error:
        return CodeCheck(Verdict.UNVERIFIABLE, f"the parser gave up, not a syntax error: {type(error).__name__}")
    except UnicodeError as error:
        return CodeCheck(Verdict.UNVERIFIABLE, f"the code is not valid Unicode: {error}")
    except (ValueError, TypeError, OverflowError, KeyError, AttributeError) as error:
        # KeyError: `!!bool maybe`; AttributeError: `!!timestamp soon` (PyYAML's constructors assume a valid scalar)
        return CodeCheck(Verdict.UNVERIFIABLE, f"well-formed, but PyYAML cannot construct a value: {error}")
    return CodeCheck(Verdict.OK)


_TEMPLATE = re.compile(r"(?<!\$)\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)")
"""A Helm/Jinja expression or statement on one line (to its end when it is not closed there); `${{` is GitHub Actions'
expression syntax, which is YAML."""


def _template_near(code: str, error: yaml.MarkedYAMLError) -> str:
    """The template marker (outside quoted scalars) on or next to where the parser failed, or ""."""
    if "{{" not in code and "{%" not in code:
        return ""
    lines = code.split("\n")
    for mark in (error.problem_mark, error.context_mark):
        if mark is None or not 0 <= mark.line < len(lines):
            continue
        masked = blank_quoted(lines[mark.line])
        for match in _TEMPLATE.finditer(masked):
            if near(match.start(), match.end(), mark.column):
                return match.group(0)[:2] + " " + match.group(0)[-2:]
    return ""


def _marked(code: str, error: yaml.MarkedYAMLError) -> CodeCheck:
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark is not None else 0
    column = f" (column {mark.column + 1})" if mark is not None else ""
    problem = error.problem or "invalid YAML"
    message = f"{error.context}: {problem}" if error.context else problem
    if "maximum nesting depth" in problem:
        return CodeCheck(Verdict.UNVERIFIABLE, f"the parser gave up, not a syntax error: {message}", line)
    if isinstance(error, yaml.constructor.ConstructorError):
        return CodeCheck(Verdict.UNVERIFIABLE, f"well-formed, but PyYAML cannot construct it: {message}", line)
    if "duplicate anchor" in message:
        return CodeCheck(Verdict.UNVERIFIABLE, f"PyYAML refuses a redefined anchor, which YAML allows: {message}", line)
    template = _template_near(code, error)
    if template:
        return CodeCheck(
            Verdict.UNVERIFIABLE, f"a template (Helm/Jinja {template}), not YAML until rendered: {message}", line
        )
    return CodeCheck(Verdict.MALFORMED, message + column, line)
