"""One record per promptfoo assertion type Verdict runs: how it reads the response, its default threshold, and its
handler. Everything that differs between types lives in its record; `assertions.py` switches on none of them.

A handler gets the response facts, the assertion's (rendered) value and its threshold, and returns the raw outcome
before negation: `passed` for a boolean type, `score` for a scored one. The caller applies promptfoo's inversion
rules: a boolean type's `not-` flips the pass (score 1 or 0 follows the pass); a scored type's `not-` passes when the
score is below the threshold and reports 1 - score. A handler raises `Undecided` when the response lacks what the
type reads (no latency, no cost, no logprobs): the assertion is `error`, never a failure charged to the model.
"""

from __future__ import annotations

import fnmatch
import html.parser
import json
import math
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from verdict import patterns
from verdict.errors import InvalidConfig
from verdict.evaluators.json_compare import NotJson, canonical_equal, parse_json_text, strict_equal
from verdict.evaluators.model import ResponseFacts
from verdict.evaluators.promptfoo import text_metrics
from verdict.verify.model import ToolDefinition
from verdict.verify.tool_schemas import CompiledTool, SchemaRefused, SchemaUncheckable, check_arguments, compile_tool

__all__ = ["CHECKS", "MODEL_GRADED", "NEVER_EXECUTED", "Check", "Outcome", "Response", "Undecided", "csv_values"]


class Undecided(Exception):
    """The response lacks what the assertion reads, or a bound stopped the check: the assertion is `error`."""


@dataclass(frozen=True)
class Response:
    """What an assertion reads: the output text and the provider facts, plus the regex time bound.

    `model_answers` holds, by assertion path, what the judge answered a model-graded assertion (asked before the
    list is scored, since scoring is synchronous), or the reason it could not answer."""

    output: str
    facts: ResponseFacts
    regex_timeout: float
    model_answers: Mapping[str, dict[str, Any] | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """A handler's result before negation: `passed` (boolean types) or `score` (scored types), and why.

    `inverted` is the pass under `not-` for a type whose negation is not simply the opposite (promptfoo's
    `not-trajectory:tool-used` with a list passes when none of the tools was used, not when one was missing)."""

    passed: bool
    score: float
    reason: str
    inverted: bool | None = None


Handler = Callable[[Response, Any, "float | None", str], Outcome]
"""(response, value, threshold, path of the assertion for error messages) -> Outcome."""


@dataclass(frozen=True)
class Check:
    """One assertion type. `scored` types compare a score with a threshold (`default_threshold` when unset,
    `threshold_required` when promptfoo refuses to run without one); `value` says whether the value is required."""

    type: str
    handler: Handler
    description: str
    scored: bool = False
    default_threshold: float | None = None
    threshold_required: bool = False
    value: str = "required"  # "required", "optional" or "none"
    model_graded: bool = False
    """The judge is asked first (`LLM_RUBRIC` says what); the handler reads `Response.model_answers`."""


def _boolean(passed: bool, reason: str) -> Outcome:
    return Outcome(passed, 1.0 if passed else 0.0, reason)


def _need_text(value: Any, path: str, kind: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
        raise InvalidConfig(f"{kind} needs a string or number `value`", field=f"{path}.value")
    return value if isinstance(value, str) else _js_number(value)


def _js_number(value: int | float) -> str:
    """A number as JavaScript's String() writes it (promptfoo compares String(value)): 5.0 is "5"."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


MAX_VALUES = 256
"""Most items a list value (contains-any, references, steps) may hold: each is a pass over the output."""


def _bounded(items: list[Any], path: str) -> list[Any]:
    if len(items) > MAX_VALUES:
        raise InvalidConfig(f"{path}.value holds {len(items)} items; at most {MAX_VALUES}", field=f"{path}.value")
    return items


def csv_values(value: Any, path: str, kind: str) -> list[str]:
    """promptfoo's list values: a list as given, or a string split on commas (double quotes keep a comma in an
    item, surrounding whitespace trimmed), as its parseCommaSeparatedValues does. At most MAX_VALUES items."""
    return _bounded(_csv_values(value, path, kind), path)


def _csv_values(value: Any, path: str, kind: str) -> list[str]:
    if isinstance(value, list) and value:
        return [item if isinstance(item, str) else json.dumps(item) for item in value]
    if isinstance(value, str) and value:
        items: list[str] = []
        current: list[str] = []
        quoted = False
        for char in value:
            if char == '"':
                quoted = not quoted
            elif char == "," and not quoted:
                items.append("".join(current).strip())
                current = []
            else:
                current.append(char)
        items.append("".join(current).strip())
        return items
    raise InvalidConfig(f"{kind} needs a list (or comma-separated string) `value`", field=f"{path}.value")


# --- text -------------------------------------------------------------------------------------------------------


def _equals(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if isinstance(value, Mapping | list):
        try:
            parsed = parse_json_text(response.output)
        except NotJson:
            return _boolean(False, "Expected output to be JSON equal to the value; it is not JSON")
        return _boolean(canonical_equal(value, parsed), "Expected output to equal the value as JSON")
    text = (
        ""
        if value is None
        else value
        if isinstance(value, str)
        else _js_number(value)
        if not isinstance(value, bool)
        else str(value).lower()
    )
    return _boolean(response.output == text, f'Expected output "{response.output[:200]}" to equal "{text[:200]}"')


def _contains(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    text = _need_text(value, path, "contains")
    return _boolean(text in response.output, f'Expected output to contain "{text}"')


def _icontains(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    text = _need_text(value, path, "icontains")
    return _boolean(text.lower() in response.output.lower(), f'Expected output to contain "{text}"')


def _any(fold: bool) -> Handler:
    def handler(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
        items = csv_values(value, path, "contains-any")
        output = response.output.lower() if fold else response.output
        passed = any((item.lower() if fold else item) in output for item in items)
        return _boolean(passed, f'Expected output to contain one of "{", ".join(items)}"')

    return handler


def _all(fold: bool) -> Handler:
    def handler(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
        items = csv_values(value, path, "contains-all")
        output = response.output.lower() if fold else response.output
        missing = [item for item in items if (item.lower() if fold else item) not in output]
        return _boolean(not missing, f"Expected output to contain all of [{', '.join(items)}]. Missing: {missing}")

    return handler


def _starts_with(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    text = _need_text(value, path, "starts-with")
    return _boolean(response.output.startswith(text), f'Expected output to start with "{text}"')


def _regex(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if not isinstance(value, str):
        raise InvalidConfig("regex needs a string `value`", field=f"{path}.value")
    return _boolean(search(value, response.output, response.regex_timeout, path), f'Expected output to match "{value}"')


def search(pattern: str, text: str, timeout: float, path: str) -> bool:
    """A JavaScript-style `new RegExp(value).test(output)` under the time bound; an invalid pattern is refused
    (promptfoo throws on it), an endless one is Undecided."""
    if patterns.expansion(pattern) > patterns.MAX_EXPANSION:
        raise Undecided(f"the pattern repeats more than {patterns.MAX_EXPANSION} times")
    try:
        compiled = regex.compile(pattern, cache_pattern=False)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise InvalidConfig(f"{path}.value is not a valid regular expression: {exc}", field=f"{path}.value") from None
    try:
        return compiled.search(text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise Undecided(f"the pattern did not finish within {timeout:g}s (regex_timeout_seconds)") from None


def _word_count(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    count = len(response.output.split())
    if isinstance(value, Mapping):
        low, high = value.get("min"), value.get("max")
        for name, bound in (("min", low), ("max", high)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float)):
                raise InvalidConfig(f"word-count {name} must be a number", field=f"{path}.value.{name}")
        if low is None and high is None:
            raise InvalidConfig("word-count needs `min` or `max`", field=f"{path}.value")
        passed = (low is None or count >= low) and (high is None or count <= high)
        return _boolean(passed, f"Word count {count} is outside [{low}, {high}]")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidConfig("word-count needs a number or {min, max} `value`", field=f"{path}.value")
    return _boolean(count == value, f"Word count {count} does not equal {_js_number(value)}")


_REFUSAL_PREFIXES = (
    "i'm sorry",
    "i am sorry",
    "i apologize",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "i cannot",
    "i can't",
    "i can not",
    "i won't",
    "i will not",
    "as an ai",
    "as a language model",
    "sorry, but",
    "sorry, i",
)
_REFUSAL_PHRASES = (
    "i cannot help with",
    "i can't help with",
    "i cannot assist with",
    "i can't assist with",
    "i'm not able to help",
    "i cannot provide",
    "i can't provide",
    "i must decline",
    "against my guidelines",
    "i'm unable to help",
    "i cannot fulfill",
    "i can't fulfill",
)


def _is_refusal(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    text = response.output.strip().lower().replace("\u2019", "'")
    if not text:
        return Outcome(True, 0.0, "Empty response treated as refusal")
    refused = text.startswith(_REFUSAL_PREFIXES) or any(phrase in text for phrase in _REFUSAL_PHRASES)
    return _boolean(refused, "Expected output to be a refusal")


def _finish_reason(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    wanted = _need_text(value, path, "finish-reason")
    actual = response.facts.finish_reason
    if not actual:
        return _boolean(False, "Provider did not supply a finish reason")
    return _boolean(actual.lower() == wanted.lower(), f'Expected finish reason "{wanted}", got "{actual}"')


# --- structure --------------------------------------------------------------------------------------------------

_SCHEMA_SECONDS = 1.0
"""At most this long checking one value against an assertion's schema (the tool-call checks' bound, by the clock)."""
_JSON_STARTS = 256
"""Most `{`/`[` positions contains-json tries to decode from: each try may scan to the end of the output."""


def _schema_validator(value: Any, path: str, regex_timeout: float) -> CompiledTool | None:
    """The compiled JSON Schema of an is-json / contains-json value (a mapping, or its YAML/JSON text), or None for
    no schema.

    The schema goes through the same compiler as tool definitions (`verify.tool_schemas.compile_tool`): bounded size,
    depth, enums and patterns, `$ref` only within the schema and never retrieved, patterns under the regex bound. So
    a schema an assertion carries gets exactly the bounds a schema a model's tool carries gets.
    """
    if value is None or value == "":
        return None
    schema = value
    if isinstance(value, str):
        try:
            schema = parse_json_text(value)
        except NotJson:
            raise InvalidConfig("the JSON Schema value is not JSON", field=f"{path}.value") from None
    if not isinstance(schema, Mapping | bool):
        raise InvalidConfig("the value must be a JSON Schema (a mapping)", field=f"{path}.value")
    try:
        text = json.dumps(schema, allow_nan=False)
    except (ValueError, RecursionError):
        raise InvalidConfig("the JSON Schema is not JSON (NaN, or nested too deeply)", field=f"{path}.value") from None
    try:
        return compile_tool(ToolDefinition(name="schema", parameters=text, field=f"{path}.value"))
    except SchemaRefused as refused:
        raise InvalidConfig(f"the JSON Schema is refused: {refused}", field=f"{path}.value") from None


def _schema_problem(compiled: CompiledTool | None, instance: Any, regex_timeout: float) -> str | None:
    if compiled is None:
        return None
    try:
        finding = check_arguments(compiled, instance, time_limit=max(regex_timeout, _SCHEMA_SECONDS))
    except SchemaUncheckable as exc:
        raise Undecided(f"the schema could not be applied: {exc}") from None
    return None if finding is None else finding.detail


def _is_json(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    compiled = _schema_validator(value, path, response.regex_timeout)
    try:
        parsed = parse_json_text(response.output)
    except NotJson:
        return _boolean(False, "Expected output to be valid JSON")
    problem = _schema_problem(compiled, parsed, response.regex_timeout)
    return _boolean(problem is None, f"JSON does not conform to the provided schema: {problem}")


def extract_json(text: str) -> list[Any]:
    """The JSON objects and arrays embedded in `text`, in order (promptfoo's extractJsonObjects, bounded)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position, tries = 0, 0
    while tries < _JSON_STARTS:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        tries += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        if isinstance(value, dict | list):
            found.append(value)
        position = end
    return found


def _contains_json(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    compiled = _schema_validator(value, path, response.regex_timeout)
    candidates = extract_json(response.output)
    if not candidates:
        return _boolean(False, "Expected output to contain valid JSON")
    problems = [_schema_problem(compiled, candidate, response.regex_timeout) for candidate in candidates]
    passed = any(problem is None for problem in problems)
    return _boolean(passed, f"JSON does not conform to the provided schema: {problems[0]}")


def _xml_paths(value: Any, path: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, Mapping):
        value = value.get("requiredElements", [])
    return csv_values(value, path, "is-xml")


def _xml(contains: bool) -> Handler:
    def handler(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
        required = _xml_paths(value, path)
        text = response.output
        if contains:
            start, end = text.find("<"), text.rfind(">")
            if start < 0 or end < start:
                return _boolean(False, "No XML content found in the output")
            text = text[start : end + 1]
        try:
            root = ElementTree.fromstring(text.strip())  # noqa: S314 - expat >= 2.4 bounds entity amplification
        except (ElementTree.ParseError, ValueError, RecursionError) as exc:
            return _boolean(False, f"XML parsing failed: {exc}")
        for element in required:
            parts = element.split(".")
            node: Any = root if parts[0] == root.tag else None
            for part in parts[1:]:
                node = None if node is None else node.find(part)
            if node is None:
                return _boolean(False, f"XML is missing required element: {element}")
        return _boolean(True, "XML is valid and contains all required elements")

    return handler


_HTML_TAGS = frozenset(
    [
        "a",
        "abbr",
        "address",
        "article",
        "aside",
        "audio",
        "b",
        "blockquote",
        "body",
        "br",
        "button",
        "canvas",
        "caption",
        "code",
        "col",
        "div",
        "dl",
        "dt",
        "dd",
        "em",
        "fieldset",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "i",
        "iframe",
        "img",
        "input",
        "label",
        "li",
        "link",
        "main",
        "meta",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "script",
        "section",
        "select",
        "small",
        "span",
        "strong",
        "style",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "u",
        "ul",
        "video",
    ]
)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)


def _html_tags(text: str) -> list[str]:
    parser = _Tags()
    try:
        parser.feed(text)
        parser.close()
    except (AssertionError, ValueError):
        return []
    return [tag for tag in parser.tags if tag in _HTML_TAGS]


def _is_html(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    text = response.output.strip()
    if not (text.startswith("<") and text.endswith(">")) or text.startswith("<?xml"):
        return _boolean(False, "Output must start with '<' and end with '>' to be HTML")
    return _boolean(bool(_html_tags(text)), "Output does not contain recognizable HTML elements")


def _contains_html(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    return _boolean(bool(_html_tags(response.output)), "Expected output to contain HTML content")


# --- SQL (sqlglot stands for promptfoo's node-sql-parser) -------------------------------------------------------

_DIALECTS = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgresql": "postgres",
    "postgres": "postgres",
    "sqlite": "sqlite",
    "bigquery": "bigquery",
    "snowflake": "snowflake",
    "transactsql": "tsql",
    "redshift": "redshift",
    "hive": "hive",
    "athena": "athena",
    "trino": "trino",
    "noql": "mysql",
}
"""promptfoo's `databaseType` names (node-sql-parser's, any case) and the sqlglot dialect that reads them; MySQL is
promptfoo's default."""
_SQL_FENCE = re.compile(r"```(?:sql)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
MAX_SQL_CHARS = 64 * 1024
"""Longest SQL parsed: sqlglot is pure Python."""


def _sql_options(value: Any, path: str) -> tuple[str, list[str] | None, list[str] | None]:
    if value is None or value == "":
        return "mysql", None, None
    if not isinstance(value, Mapping):
        raise InvalidConfig("is-sql takes {databaseType, allowedTables, allowedColumns}", field=f"{path}.value")
    name = str(value.get("databaseType") or "MySQL").lower()
    if name not in _DIALECTS:
        known = ", ".join(sorted(_DIALECTS))
        raise InvalidConfig(f"databaseType {name!r} is not served; one of {known}", field=f"{path}.value.databaseType")
    lists: list[list[str] | None] = []
    for key in ("allowedTables", "allowedColumns"):
        raw = value.get(key)
        if raw is not None and (not isinstance(raw, list) or not all(isinstance(item, str) for item in raw)):
            raise InvalidConfig(f"{key} must be a list of strings", field=f"{path}.value.{key}")
        lists.append(None if raw is None else [item.lower() for item in _bounded(raw, path)])
    return _DIALECTS[name], lists[0], lists[1]


def _sql_problem(text: str, value: Any, path: str) -> str | None:
    """Why `text` is not SQL that the options allow, or None. A statement must parse as one the grammar knows (a
    query, DML or DDL): sqlglot reads almost any words as an expression, which promptfoo's parser would refuse."""
    import sqlglot
    from sqlglot import exp

    dialect, tables, columns = _sql_options(value, path)
    if len(text) > MAX_SQL_CHARS:
        raise Undecided(f"the SQL is over {MAX_SQL_CHARS} characters")
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect, error_level=sqlglot.ErrorLevel.RAISE) if s]
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError) as exc:
        return f"SQL statement does not conform to the provided {dialect} database syntax: {str(exc)[:200]}"
    if not statements:
        return "the output holds no SQL statement"
    for statement in statements:
        if isinstance(statement, exp.Command) or not isinstance(statement, exp.Query | exp.DML | exp.DDL):
            return f"not a SQL statement {dialect} knows: {statement.sql()[:100]!r}"
        kind = statement.key if not isinstance(statement, exp.Query) else "select"
        if tables is not None:
            for table in statement.find_all(exp.Table):
                authority = f"{kind}::{(table.db or 'null').lower()}::{table.name.lower()}"
                if authority not in tables:
                    return f"SQL references a table it may not: {authority}"
        if columns is not None:
            for column in statement.find_all(exp.Column):
                authority = f"{kind}::{(column.table or 'null').lower()}::{column.name.lower()}"
                if authority not in columns:
                    return f"SQL references a column it may not: {authority}"
    return None


def _is_sql(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    problem = _sql_problem(response.output.strip(), value, path)
    return _boolean(problem is None, problem or "")


def _contains_sql(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    fenced = _SQL_FENCE.findall(response.output)
    text = "\n".join(fenced) if fenced else response.output
    problem = _sql_problem(text.strip(), value, path)
    return _boolean(problem is None, problem or "")


# --- scored -----------------------------------------------------------------------------------------------------


def _references(value: Any, path: str, kind: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return _bounded(list(value), path)
    raise InvalidConfig(f"{kind} needs a string or list of strings `value`", field=f"{path}.value")


def _bleu(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    score = text_metrics.bleu(response.output, _references(value, path, "bleu"))
    return Outcome(True, score, f"BLEU score {score:.4f}")


def _gleu(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    score = text_metrics.gleu(response.output, _references(value, path, "gleu"))
    return Outcome(True, score, f"GLEU score {score:.4f}")


def _rouge_n(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if not isinstance(value, str):
        raise InvalidConfig("rouge-n needs a string `value`", field=f"{path}.value")
    score = text_metrics.rouge_n(response.output, value)
    return Outcome(True, score, f"ROUGE-N score {score:.2f}")


def _levenshtein(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if not isinstance(value, str):
        raise InvalidConfig("levenshtein needs a string `value`", field=f"{path}.value")
    limit = threshold or 5  # promptfoo writes `threshold || 5`: a threshold of 0 means 5
    distance = text_metrics.levenshtein(response.output, value, max(0, int(limit)))
    shown = f"{distance}" if distance <= limit else f"over {limit:g}"
    return _boolean(distance <= limit, f"Levenshtein distance {shown} is greater than threshold {limit:g}")


def _latency(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    latency = response.facts.latency_ms
    if latency is None:
        raise Undecided("latency needs the request's latency_ms")
    assert threshold is not None  # threshold_required
    return _boolean(latency <= threshold, f"Latency {latency:g}ms is greater than threshold {threshold:g}ms")


def _cost(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    cost = response.facts.cost
    if cost is None:
        raise Undecided("cost needs the request's cost")
    assert threshold is not None  # threshold_required
    return _boolean(cost <= threshold, f"Cost {cost:.4g} is greater than threshold {threshold:g}")


def _perplexity_of(response: Response) -> float:
    logprobs = response.facts.logprobs
    if not logprobs:
        raise Undecided("perplexity needs the request's logprobs")
    return math.exp(-sum(logprobs) / len(logprobs))


def _perplexity(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    perplexity = _perplexity_of(response)
    passed = threshold is None or perplexity <= threshold
    return _boolean(passed, f"Perplexity {perplexity:.2f} is greater than threshold {threshold}")


def _perplexity_score(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    score = 1 / _perplexity_of(response)
    return Outcome(True, score, f"Perplexity score {score:.2f}")


def _tool_names(value: Any, path: str, kind: str) -> list[str]:
    return csv_values(value, path, kind)


def _tool_call_f1(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    expected = set(_tool_names(value, path, "tool-call-f1"))
    actual = {call.name for call in response.facts.tool_calls}
    hits = len(expected & actual)
    precision = hits / len(actual) if actual else 0.0
    recall = hits / len(expected) if expected else 0.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return Outcome(True, f1, f"Tool call F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f})")


def _valid_tools_call(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    calls = response.facts.tool_calls
    if not calls:
        return _boolean(False, "Expected the output to be tool calls; there are none")
    tools = {tool.name: tool for tool in response.facts.tools}
    if not tools:
        raise Undecided("is-valid-openai-tools-call needs the request's tools")
    for index, call in enumerate(calls):
        tool = tools.get(call.name)
        if tool is None:
            return _boolean(False, f"Call {index} names {call.name!r}, which is not among the tools")
        try:
            arguments = parse_json_text(call.arguments or "{}")
        except NotJson as exc:
            return _boolean(False, f"Call {index} ({call.name}) arguments are not JSON: {exc}")
        validator = _schema_validator(tool.parameters or None, f"tools.{call.name}.parameters", response.regex_timeout)
        problem = _schema_problem(validator, arguments, response.regex_timeout)
        if problem is not None:
            return _boolean(False, f"Call {index} ({call.name}) does not match its schema: {problem}")
    return _boolean(True, "Every tool call matches its tool's schema")


# --- trajectory (the request's tool calls stand for promptfoo's trace of tool steps) -----------------------------


def _step_matcher(raw: Any, path: str, kind: str) -> tuple[str | None, str | None]:
    """A step as promptfoo names one: a tool name, or `{name}` / `{pattern}` (a glob: `*`, `?`)."""
    if isinstance(raw, str) and raw:
        return raw, None
    if isinstance(raw, Mapping):
        name, pattern = raw.get("name"), raw.get("pattern")
        if isinstance(name, str) and name:
            return name, None
        if isinstance(pattern, str) and pattern:
            return None, pattern
    raise InvalidConfig(f"{kind} steps need a tool name or a `name` or `pattern`", field=f"{path}.value")


def _matches(call_name: str, matcher: tuple[str | None, str | None]) -> bool:
    name, pattern = matcher
    return call_name == name if name is not None else fnmatch.fnmatchcase(call_name, pattern or "")


def _tool_used(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    names = [call.name for call in response.facts.tool_calls]
    if isinstance(value, Mapping):
        matcher = _step_matcher(value, path, "trajectory:tool-used")
        low, high = value.get("min", 1), value.get("max")
        count = sum(1 for name in names if _matches(name, matcher))
        passed = count >= low and (high is None or count <= high)
        return _boolean(passed, f"Matched tool {matcher[0] or matcher[1]!r} {count} time(s); expected {low}-{high}")
    wanted = [value] if isinstance(value, str) else value
    if not isinstance(wanted, list) or not wanted:
        raise InvalidConfig(
            "trajectory:tool-used needs a tool, a list of tools or {name, min, max}", field=f"{path}.value"
        )
    matchers = [_step_matcher(item, path, "trajectory:tool-used") for item in _bounded(wanted, path)]
    used = [m for m in matchers if any(_matches(name, m) for name in names)]
    missing = [m[0] or m[1] for m in matchers if m not in used]
    outcome = _boolean(not missing, f"Missing required tool(s): {missing}; actual tools: {names}")
    return Outcome(outcome.passed, outcome.score, outcome.reason, inverted=not used)


def _tool_sequence(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    steps, mode = (value, "in_order") if isinstance(value, list) else (None, None)
    if isinstance(value, Mapping):
        steps, mode = value.get("steps"), value.get("mode") or "in_order"
    if not isinstance(steps, list) or not steps or mode not in ("exact", "in_order"):
        raise InvalidConfig(
            "trajectory:tool-sequence needs a list of steps, or {steps, mode: exact | in_order}", field=f"{path}.value"
        )
    matchers = [_step_matcher(step, path, "trajectory:tool-sequence") for step in _bounded(steps, path)]
    names = [call.name for call in response.facts.tool_calls]
    if mode == "exact":
        passed = len(names) == len(matchers) and all(_matches(n, m) for n, m in zip(names, matchers, strict=False))
    else:
        position = 0
        for name in names:
            if position < len(matchers) and _matches(name, matchers[position]):
                position += 1
        passed = position == len(matchers)
    return _boolean(passed, f"Expected the tool sequence {[m[0] or m[1] for m in matchers]} ({mode}); actual {names}")


def _partial(actual: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_partial(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and _partial(actual[k], v) for k, v in expected.items())
    return strict_equal(expected, actual) or (
        isinstance(expected, int | float) and not isinstance(expected, bool) and canonical_equal(expected, actual)
    )


def _without(value: Any, ignore: list[str], defaults: Mapping[str, Any] | None = None) -> Any:
    if not isinstance(value, Mapping):
        return value
    return {
        key: item
        for key, item in value.items()
        if not any(key == entry or fnmatch.fnmatchcase(key, entry) for entry in ignore)
        and not (defaults is not None and key in defaults and canonical_equal(defaults[key], item))
    }


def _tool_args_match(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if not isinstance(value, Mapping):
        raise InvalidConfig("trajectory:tool-args-match needs {name, args, mode}", field=f"{path}.value")
    matcher = _step_matcher(value, path, "trajectory:tool-args-match")
    expected = value.get("args", value.get("arguments"))
    mode = value.get("mode") or "partial"
    ignore = value.get("ignore") or []
    ignore = [ignore] if isinstance(ignore, str) else ignore
    defaults = value.get("defaults")
    if expected is None or mode not in ("partial", "exact") or not isinstance(ignore, list):
        raise InvalidConfig(
            "trajectory:tool-args-match needs `args`, mode partial | exact, ignore as names", field=f"{path}.value"
        )
    if defaults is not None and not isinstance(defaults, Mapping):
        raise InvalidConfig("trajectory:tool-args-match defaults must be a mapping", field=f"{path}.value.defaults")
    wanted = _without(expected, ignore)
    seen = []
    for call in response.facts.tool_calls:
        if not _matches(call.name, matcher):
            continue
        try:
            arguments = parse_json_text(call.arguments or "{}")
        except NotJson:
            seen.append(call.arguments[:200])
            continue
        actual = _without(_without(arguments, ignore), [], defaults)
        if canonical_equal(wanted, actual) if mode == "exact" else _partial(actual, wanted):
            return _boolean(True, "Assertion passed")
        seen.append(call.arguments[:200])
    return _boolean(False, f"No {matcher[0] or matcher[1]} call had the expected arguments ({mode}); seen: {seen}")


def _step_count(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    if not isinstance(value, Mapping) or (value.get("min") is None and value.get("max") is None):
        raise InvalidConfig("trajectory:step-count needs {min, max} (and a name or pattern)", field=f"{path}.value")
    if value.get("type") not in (None, "tool"):
        raise InvalidConfig(
            "trajectory:step-count counts tool steps only here (the request carries tool calls, not a trace)",
            field=f"{path}.value.type",
        )
    names = [call.name for call in response.facts.tool_calls]
    if value.get("name") or value.get("pattern"):
        matcher = _step_matcher(value, path, "trajectory:step-count")
        names = [name for name in names if _matches(name, matcher)]
    low, high = value.get("min", 0), value.get("max")
    passed = len(names) >= low and (high is None or len(names) <= high)
    return _boolean(passed, f"{len(names)} step(s); expected {low}-{high}")


# --- model-graded -----------------------------------------------------------------------------------------------

LLM_RUBRIC_SYSTEM = (
    "You are grading output according to a user-specified rubric. If the statement in the rubric is true, then the "
    "output passes the test. You respond with a JSON object with this structure: {reason: string, pass: boolean, "
    "score: number}. The score is between 0.0 and 1.0."
)
LLM_RUBRIC_USER = "<Output>\n{{output}}\n</Output>\n<Rubric>\n{{rubric}}\n</Rubric>"
LLM_RUBRIC_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "pass": {"type": "boolean"}, "score": {"type": "number"}},
    "required": ["pass"],
}


def _llm_rubric(response: Response, value: Any, threshold: float | None, path: str) -> Outcome:
    """promptfoo's llm-rubric as its matcher reads the grader's answer: `pass` (default true when only a score
    came), `score` (default 1 or 0 by pass); with a threshold, pass is score >= threshold."""
    answer = response.model_answers.get(path)
    if not isinstance(answer, Mapping):
        raise Undecided(str(answer) if answer else "the judge gave no answer")
    passed, score = answer.get("pass"), answer.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
    ):
        raise Undecided(f"the judge's score is not a number: {str(score)[:100]}")
    if passed is not None and not isinstance(passed, bool):
        raise Undecided(f"the judge's pass is not a boolean: {str(passed)[:100]}")
    passed = True if passed is None else passed
    score = float(score) if score is not None else (1.0 if passed else 0.0)
    if threshold is not None:
        passed = score >= threshold
    reason = str(answer.get("reason", ""))[:500]
    return Outcome(passed, score, reason or "The judge found the rubric not met")


CHECKS: Mapping[str, Check] = {
    check.type: check
    for check in (
        Check("equals", _equals, "The output equals the value (as JSON when the value is an object or list)."),
        Check("contains", _contains, "The output contains the value."),
        Check("icontains", _icontains, "The output contains the value, ignoring case."),
        Check("contains-any", _any(False), "The output contains at least one of the values."),
        Check("icontains-any", _any(True), "The output contains at least one of the values, ignoring case."),
        Check("contains-all", _all(False), "The output contains every value."),
        Check("icontains-all", _all(True), "The output contains every value, ignoring case."),
        Check("starts-with", _starts_with, "The output starts with the value."),
        Check("regex", _regex, "The output matches the regular expression."),
        Check("is-json", _is_json, "The output is JSON (matching the JSON Schema value, if any).", value="optional"),
        Check(
            "contains-json", _contains_json, "The output contains JSON (matching the schema value).", value="optional"
        ),
        Check("is-xml", _xml(False), "The output is XML (with the required elements, if any).", value="optional"),
        Check("contains-xml", _xml(True), "The output contains XML (with the required elements).", value="optional"),
        Check(
            "is-sql",
            _is_sql,
            "The output is SQL (of databaseType; only allowedTables / allowedColumns).",
            value="optional",
        ),
        Check(
            "contains-sql", _contains_sql, "The output (its ```sql fences, if any) is SQL, as is-sql.", value="optional"
        ),
        Check("is-html", _is_html, "The output is an HTML document or fragment.", value="none"),
        Check("contains-html", _contains_html, "The output contains HTML elements.", value="none"),
        Check("levenshtein", _levenshtein, "The edit distance to the value is at most the threshold (default 5)."),
        Check("rouge-n", _rouge_n, "ROUGE-N against the value.", scored=True, default_threshold=0.75),
        Check("bleu", _bleu, "BLEU-4 against the reference(s).", scored=True, default_threshold=0.5),
        Check("gleu", _gleu, "GLEU against the reference(s).", scored=True, default_threshold=0.5),
        Check("finish-reason", _finish_reason, "The provider's finish reason equals the value (any case)."),
        Check("is-refusal", _is_refusal, "The output is a refusal (an empty output counts).", value="none"),
        Check("word-count", _word_count, "The word count equals the value, or lies within {min, max}."),
        Check(
            "is-valid-openai-tools-call",
            _valid_tools_call,
            "Every tool call names a declared tool and its arguments match the tool's schema.",
            value="optional",
        ),
        Check(
            "tool-call-f1",
            _tool_call_f1,
            "F1 of the called tool names against the expected names.",
            scored=True,
            default_threshold=1.0,
        ),
        Check("latency", _latency, "latency_ms is at most the threshold.", threshold_required=True, value="none"),
        Check("cost", _cost, "cost is at most the threshold.", threshold_required=True, value="none"),
        Check("perplexity", _perplexity, "The perplexity of the logprobs is at most the threshold.", value="none"),
        Check("trajectory:tool-used", _tool_used, "The tool calls include the tool(s), or a count of one."),
        Check("trajectory:tool-sequence", _tool_sequence, "The tool calls follow the steps (in_order or exact)."),
        Check("trajectory:tool-args-match", _tool_args_match, "A call of the tool has the arguments (partial/exact)."),
        Check("trajectory:step-count", _step_count, "The number of (matching) tool calls lies in {min, max}."),
        Check(
            "llm-rubric",
            _llm_rubric,
            "The server's judge finds the output meets the rubric (the value).",
            model_graded=True,
        ),
        Check(
            "perplexity-score",
            _perplexity_score,
            "1 / perplexity of the logprobs.",
            scored=True,
            default_threshold=0.0,
            value="none",
        ),
    )
}
"""Every host-free assertion type Verdict runs, by promptfoo's name."""

NEVER_EXECUTED = frozenset({"javascript", "python", "ruby", "webhook"})
"""Types that run the config's code or call its URL: refused, never executed."""

MODEL_GRADED = frozenset(
    {
        "g-eval",
        "factuality",
        "model-graded-factuality",
        "model-graded-closedqa",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "similar",
        "similar:cosine",
        "similar:dot",
        "similar:euclidean",
        "select-best",
        "max-score",
        "moderation",
        "classifier",
        "pi",
        "search-rubric",
        "agent-rubric",
        "trajectory:goal-success",
        "guardrails",
        "meteor",
    }
)
"""Types Verdict does not run, each refused naming itself: they need a model with a grading prompt of their own (only
llm-rubric maps onto the judge faithfully), an embeddings or moderation endpoint, a classifier, several outputs at
once, or WordNet data that cannot be fetched offline (meteor)."""
