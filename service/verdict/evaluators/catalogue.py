"""The evaluator catalogue (what ListEvaluators returns) and the one validation every configuration goes through.

A configuration arrives as a plain dict, either built from a typed proto member or parsed from a little-loops
`evaluate:` block; both are checked here against the same field specs, so both forms give identical results. The
reference dropped unknown keys silently (BUG-2893/2894: two authors wrote `key:` and nothing happened), so every
key must belong to the evaluator's type; a key of another type, a misspelt key, a missing required field, a value of
the wrong type or out of range (reference §1.4) is an InvalidConfig naming `config.<key>`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from verdict.errors import InvalidConfig, ResourceExhausted

__all__ = [
    "EXIT_CODE_AWARE",
    "JUDGED_TYPES",
    "SPECS",
    "EvaluatorSpec",
    "FieldSpec",
    "evaluator_type",
    "load_evaluate_block",
    "validate",
]

OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge")
DEFAULT_CONTRACT = "the producer and consumer must be compatible"
_COMMON_KEYS = ("type", "source")


MAX_COMPARATOR_PAIRS = 16
"""Each pair is two judge calls of up to the judge timeout: an unbounded min_pairs is an unbounded bill."""


@dataclass(frozen=True)
class FieldSpec:
    """One configuration key of an evaluator type.

    `type` is one of the EvaluatorField.type strings of the proto ("string", "number", "integer", "boolean",
    "number|string", "string|integer", "any", "list[string]", "object", "list[object]"). `choices`, `minimum` and
    `maximum` are the range rules validation applies; they are not part of the wire catalogue.
    """

    name: str
    type: str
    description: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class EvaluatorSpec:
    """One evaluator type as ListEvaluators describes it."""

    type: str
    description: str
    fields: tuple[FieldSpec, ...]
    verdicts: tuple[str, ...]
    open_verdicts: bool = False
    exit_code_aware: bool = False
    uses_judge: bool = False
    stateful: bool = False

    def field(self, name: str) -> FieldSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)


_SOURCE = FieldSpec(
    "source",
    "string",
    "An ${...} expression whose value replaces the output as the evaluator's input (the raw output when it does "
    "not resolve).",
)
_OPERATOR = FieldSpec("operator", "string", "Comparison operator: eq, ne, lt, le, gt or ge.", True, choices=OPERATORS)
_MAX_STALL = FieldSpec(
    "max_stall", "integer", "Calls without progress that mean stalled; at least 1.", False, 1, minimum=1
)
_EPSILON = FieldSpec(
    "epsilon", "number", "Progress must beat the best so far by more than this; at least 0.", False, 0.5, minimum=0
)
_HISTORY_FILE = FieldSpec(
    "history_file",
    "string",
    "Accepted for compatibility with little-loops files and ignored: the history travels in the state token.",
)
_MODEL = FieldSpec("model", "string", "The model alias passed to the judge host; the server's judge_model when unset.")
_FRESH = FieldSpec(
    "fresh",
    "boolean",
    "Ask the judge again instead of answering from the ruling cache (to sample several rulings on purpose).",
    default=False,
)
_ERROR = "error"
_YES_NO_ERROR = ("yes", "no", _ERROR)

_PAIR_FIELDS = (
    FieldSpec("producer", "string", "The producer file, relative to the workspace.", default=""),
    FieldSpec("consumer", "string", "The consumer file, relative to the workspace.", default=""),
    FieldSpec("contract", "string", "The rule the pair must satisfy.", default=DEFAULT_CONTRACT),
    FieldSpec("producer_pattern", "string", "A regular expression (DOTALL) whose matches stand for the producer."),
    FieldSpec("consumer_pattern", "string", "A regular expression (DOTALL) whose matches stand for the consumer."),
    FieldSpec("producer_content", "string", "The producer's content inline, instead of reading the producer file."),
    FieldSpec("consumer_content", "string", "The consumer's content inline, instead of reading the consumer file."),
)

_LLM_VERDICTS = ("yes", "no", "blocked", "partial", "cannot_judge")

SPECS: dict[str, EvaluatorSpec] = {
    spec.type: spec
    for spec in (
        EvaluatorSpec(
            "exit_code",
            "The action's exit code: 0 is yes, 1 is no, anything else is error.",
            (_SOURCE,),
            _YES_NO_ERROR,
            exit_code_aware=True,
        ),
        EvaluatorSpec(
            "output_numeric",
            "Compares the output (or the last `key=<number>` or `key: <number>` in it) with a numeric target.",
            (
                _OPERATOR,
                FieldSpec(
                    "target", "number|string", "The target: a number, or a string interpolated then parsed.", True
                ),
                FieldSpec(
                    "key",
                    "string",
                    'Read the value from the last `key=<number>`, `key: <number>` or `"key": <number>` in the output.',
                ),
                _SOURCE,
            ),
            _YES_NO_ERROR,
        ),
        EvaluatorSpec(
            "output_json",
            "Compares the value at a dotted path in the output's JSON with a target.",
            (
                FieldSpec(
                    "path", "string", "A dotted path into the JSON (`.a.b.0`); the leading dot is optional.", True
                ),
                _OPERATOR,
                FieldSpec(
                    "target", "any", "The target, compared by deep equality or numerically; never interpolated.", True
                ),
                _SOURCE,
            ),
            _YES_NO_ERROR,
        ),
        EvaluatorSpec(
            "output_contains",
            "Searches the output for a regular expression (a substring when the expression is invalid).",
            (
                FieldSpec("pattern", "string", "The regular expression; case-sensitive, no MULTILINE or DOTALL.", True),
                FieldSpec("negate", "boolean", "Invert the result.", default=False),
                FieldSpec(
                    "error_patterns",
                    "list[string]",
                    "Substrings that turn an un-negated `no` into `error` (auth failures printed with exit code 0).",
                    default=[],
                ),
                _SOURCE,
            ),
            _YES_NO_ERROR,
        ),
        EvaluatorSpec(
            "convergence",
            "Tracks a numeric output towards a target: reached, progressing, or stalled.",
            (
                FieldSpec("target", "number|string", "The target: a number, or a string that is interpolated.", True),
                FieldSpec(
                    "tolerance",
                    "number|string",
                    "Distance from the target that counts as reached: a number (at least 0) or an interpolated string.",
                    default=0.0,
                    minimum=0,
                ),
                FieldSpec("previous", "string", "An ${...} expression for the previous value; no `stall` without it."),
                FieldSpec(
                    "direction",
                    "string",
                    "minimize or maximize.",
                    default="minimize",
                    choices=("minimize", "maximize"),
                ),
                _SOURCE,
            ),
            ("target", "progress", "stall", _ERROR),
        ),
        EvaluatorSpec(
            "classify",
            "One non-blank line of the output, stripped, is the verdict (possibly empty).",
            (
                FieldSpec(
                    "line",
                    "string|integer",
                    "Which non-blank line: `last` (when unset), `first`, or an index (negative from the end).",
                ),
                _SOURCE,
            ),
            ("", _ERROR),
            open_verdicts=True,
        ),
        EvaluatorSpec(
            "diff_stall",
            "Fingerprints the workspace's git repository (HEAD, index, work tree, untracked files); no change for "
            "max_stall calls means stalled.",
            (
                FieldSpec(
                    "scope",
                    "list[string]",
                    "Pathspecs (relative to the workspace) the comparison is limited to; the whole tree when empty.",
                    default=[],
                ),
                _MAX_STALL,
                FieldSpec(
                    "compare",
                    "string",
                    "`content` (default): HEAD, the index, tracked content and untracked files; `stat`: the text of "
                    "`git diff --stat`, as little-loops compares.",
                    default="content",
                    choices=("content", "stat"),
                ),
                _SOURCE,
            ),
            _YES_NO_ERROR,
            exit_code_aware=True,
            stateful=True,
        ),
        EvaluatorSpec(
            "action_stall",
            "The same tracked values for max_repeat calls means stalled.",
            (
                FieldSpec(
                    "track",
                    "list[string]",
                    "Keys whose values are tracked: a dotted ${...} path, or a bare key looked up in context, "
                    "captured, prev and result.",
                    default=["action"],
                ),
                FieldSpec(
                    "max_repeat", "integer", "Identical calls that mean stalled; at least 1.", default=2, minimum=1
                ),
                _SOURCE,
            ),
            _YES_NO_ERROR,
            exit_code_aware=True,
            stateful=True,
        ),
        EvaluatorSpec(
            "score_stall",
            "Takes one score per call as the output; no new best for max_stall calls means stalled.",
            (_MAX_STALL, _EPSILON, _HISTORY_FILE, _SOURCE),
            _YES_NO_ERROR,
            exit_code_aware=True,
            stateful=True,
        ),
        EvaluatorSpec(
            "open_question_stall",
            "Takes one open-question count per call as the output; no new lowest for max_stall calls means stalled.",
            (_MAX_STALL, _EPSILON, _HISTORY_FILE, _SOURCE),
            _YES_NO_ERROR,
            exit_code_aware=True,
            stateful=True,
        ),
        EvaluatorSpec(
            "mcp_result",
            "Reads an MCP tool-call envelope and the mcp-call exit code.",
            (_SOURCE,),
            ("success", "tool_error", "not_found", "timeout"),
            exit_code_aware=True,
        ),
        EvaluatorSpec(
            "harbor_scorer",
            "A Harbor benchmark scorer: exit 0 with a float score is yes, a non-zero exit is no.",
            (_SOURCE,),
            _YES_NO_ERROR,
            exit_code_aware=True,
        ),
        EvaluatorSpec(
            "llm_structured",
            "Asks an LLM judge, which must quote verbatim evidence for its verdict.",
            (
                FieldSpec("prompt", "string", "What to judge; interpolated. Default: whether the action succeeded."),
                FieldSpec(
                    "schema", "object", "A custom JSON schema for the answer; skips the grammar and evidence rules."
                ),
                FieldSpec(
                    "min_confidence",
                    "number",
                    "Minimum confidence for a confident verdict; between 0 and 1.",
                    default=0.5,
                    minimum=0,
                    maximum=1,
                ),
                FieldSpec("uncertain_suffix", "boolean", "Append `_uncertain` below min_confidence.", default=False),
                _MODEL,
                _FRESH,
                _SOURCE,
            ),
            (*_LLM_VERDICTS, *(f"{verdict}_uncertain" for verdict in _LLM_VERDICTS), _ERROR),
            open_verdicts=True,
            exit_code_aware=True,
            uses_judge=True,
        ),
        EvaluatorSpec(
            "comparator",
            "A blind A/B judgement of the output against a baseline output.",
            (
                FieldSpec("prompt", "string", "What the outputs are judged against; replaces the default framing."),
                FieldSpec(
                    "baseline_path", "string", "A directory under the workspace holding the baseline as output.txt."
                ),
                FieldSpec("baseline", "string", "The baseline output inline, instead of baseline_path."),
                FieldSpec("auto_promote", "boolean", "Promote the output to baseline when it wins.", default=False),
                FieldSpec(
                    "min_pairs",
                    "integer",
                    "Blind comparisons to run (each judged in both orders); values below 1 count as 1; at most 16.",
                    default=1,
                    maximum=MAX_COMPARATOR_PAIRS,
                ),
                _MODEL,
                _FRESH,
                _SOURCE,
            ),
            ("yes", "no", "tie", "no_baseline", _ERROR),
            uses_judge=True,
        ),
        EvaluatorSpec(
            "contract",
            "An LLM judgement of producer/consumer file pairs.",
            (
                FieldSpec(
                    "pairs",
                    "list[object]",
                    "Producer/consumer pairs: producer, consumer, contract, and optional producer_pattern, "
                    "consumer_pattern, producer_content, consumer_content.",
                    True,
                ),
                _FRESH,
                _SOURCE,
            ),
            _YES_NO_ERROR,
            exit_code_aware=True,
            uses_judge=True,
        ),
    )
}

EXIT_CODE_AWARE = frozenset(spec.type for spec in SPECS.values() if spec.exit_code_aware)
"""Types that read the exit code themselves, so a non-zero exit other than 124 does not short-circuit (BUG-1815)."""

JUDGED_TYPES = frozenset(spec.type for spec in SPECS.values() if spec.uses_judge)

_ALL_KEYS = sorted({spec.name for evaluator in SPECS.values() for spec in evaluator.fields} | set(_COMMON_KEYS))


MAX_LIST_ITEMS = 64
"""Most entries a list field (error_patterns, track, scope, pairs) may hold: each costs a pass over the output, an
interpolation, a git argument or a judge call, and a request of a few megabytes could otherwise hold a million."""

MAX_EVALUATE_BLOCK_CHARS = 64 * 1024
"""An evaluate block is a few lines; the cap bounds the time the pure-Python YAML parser spends on the event loop."""


class _EvaluateBlockLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases: `*a` inside `*b` inside `*c` expands exponentially (a "billion laughs"
    document of 1 KB is 10^8 nodes) the first time anything walks the result, such as the JSON of a judge schema."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not accepted in an evaluate block", mark)
        return super().compose_node(parent, index)


def load_evaluate_block(text: str) -> dict[str, Any]:
    """Parse the `yaml` member: a little-loops `evaluate:` block as YAML or JSON, into a dict for `validate`.

    A document holding just `evaluate: {...}` is unwrapped, so a block copied together with its key also works.
    Raises InvalidConfig(field="config.yaml") when the text is not YAML, not a mapping, nested too deeply, uses
    aliases or holds a value Python cannot build (an impossible date, an integer over 4300 digits), and
    ResourceExhausted when it is over MAX_EVALUATE_BLOCK_CHARS.
    """
    if len(text) > MAX_EVALUATE_BLOCK_CHARS:
        raise ResourceExhausted(
            f"config.yaml is {len(text)} characters; the limit is {MAX_EVALUATE_BLOCK_CHARS}",
            reason="CONFIG_TOO_LARGE",
            metadata={"field": "config.yaml", "limit": str(MAX_EVALUATE_BLOCK_CHARS)},
        )
    try:
        document = yaml.load(text, Loader=_EvaluateBlockLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidConfig(f"config.yaml is not valid YAML or JSON: {exc}", field="config.yaml") from None
    except RecursionError:
        raise InvalidConfig("config.yaml is nested too deeply", field="config.yaml") from None
    except (ValueError, OverflowError) as exc:  # PyYAML's constructors: `2024-02-30`, an int over 4300 digits
        raise InvalidConfig(f"config.yaml holds a value that cannot be built: {exc}", field="config.yaml") from None
    if isinstance(document, dict) and set(document) == {"evaluate"} and isinstance(document["evaluate"], dict):
        document = document["evaluate"]
    if not isinstance(document, dict):
        raise InvalidConfig("config.yaml must hold a mapping of evaluate keys (type, ...)", field="config.yaml")
    return document


def evaluator_type(config: Mapping[str, Any]) -> EvaluatorSpec:
    """The spec of the configuration's `type`; the one check that runs before the exit-code short-circuits.

    The short-circuit rules are defined per type (mcp_result is exempt from the 124 rule, the exit-code-aware types
    from the non-zero rule), so the type must be known before they can apply.
    """
    if not isinstance(config, Mapping):
        raise InvalidConfig("the evaluator configuration must be a mapping", field="config")
    kind = config.get("type")
    if kind is None or kind == "":
        raise InvalidConfig(f"config.type is required; one of {', '.join(sorted(SPECS))}", field="config.type")
    if not isinstance(kind, str) or kind not in SPECS:
        close = difflib.get_close_matches(str(kind), SPECS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidConfig(
            f"unknown evaluator type {kind!r}{hint}; valid types: {', '.join(sorted(SPECS))}", field="config.type"
        )
    return SPECS[kind]


def validate(config: Mapping[str, Any], *, judge_model: str = "sonnet") -> dict[str, Any]:
    """Check a configuration against its type's spec and return it with every default filled in.

    Numbers come back as float (integers as int), lists as lists. `source` is always present (None when unset);
    `model` of the judge types defaults to `judge_model`. Raises InvalidConfig naming `config.<key>`.
    """
    spec = evaluator_type(config)
    for key in config:
        if key in _COMMON_KEYS:
            continue
        if not isinstance(key, str) or spec.field(key) is None:
            raise _unknown_key(spec, key)
    settings: dict[str, Any] = {"type": spec.type}
    for field in spec.fields:
        raw = config.get(field.name)
        path = f"config.{field.name}"
        if field.type == "any" and field.name in config:
            _check_json(raw, path)
            settings[field.name] = raw
            continue
        if raw is None or (field.required and field.type == "string" and raw == ""):
            if field.required:
                raise InvalidConfig(f"{spec.type} needs `{field.name}`", field=path)
            settings[field.name] = _fresh(field.default)
            continue
        settings[field.name] = _check(field, raw, path)
    if spec.field("model") is not None and settings["model"] is None:
        settings["model"] = judge_model
    if spec.type == "comparator":
        _check_baseline(settings)
        settings["min_pairs"] = max(1, settings["min_pairs"])
    if spec.type == "contract":
        settings["pairs"] = [_check_pair(pair, index) for index, pair in enumerate(settings["pairs"])]
        if not settings["pairs"]:
            raise InvalidConfig("contract needs at least one pair", field="config.pairs")
    if spec.type == "output_numeric" and settings["key"] == "":
        settings["key"] = None
    if spec.type == "output_numeric" and settings["key"] is not None and settings["key"].isspace():
        raise InvalidConfig(
            "config.key must hold a non-whitespace character: `<key>\\s*=` over a long run of whitespace is a "
            "quadratic search",
            field="config.key",
        )
    return settings


def _fresh(default: Any) -> Any:
    return list(default) if isinstance(default, list) else default


def _unknown_key(spec: EvaluatorSpec, key: object) -> InvalidConfig:
    name = str(key)
    owners = sorted(evaluator.type for evaluator in SPECS.values() if evaluator.field(name) is not None)
    if owners:
        return InvalidConfig(
            f"`{name}` is not a key of {spec.type} (it belongs to {', '.join(owners)})", field=f"config.{name}"
        )
    accepted = [field.name for field in spec.fields]
    close = difflib.get_close_matches(name, accepted, n=1) or difflib.get_close_matches(name, _ALL_KEYS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    keys = ", ".join(accepted)
    return InvalidConfig(f"unknown key `{name}` for {spec.type}{hint}; it accepts: {keys}", field=f"config.{name}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


MAX_INTEGER = 2**53
"""Integer fields beyond ±2^53 are refused: a `google.protobuf.Value` (the wire form of numbers, details included)
holds integers exactly only up to there, and past about 1e308 not at all."""


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _check(field: FieldSpec, raw: Any, path: str) -> Any:
    kind = field.type
    value: Any
    if kind == "string":
        if not isinstance(raw, str):
            raise InvalidConfig(f"{path} must be a string, got {_describe(raw)}", field=path)
        value = raw
    elif kind == "boolean":
        if not isinstance(raw, bool):
            raise InvalidConfig(f"{path} must be true or false, got {_describe(raw)}", field=path)
        value = raw
    elif kind == "number":
        if not _is_number(raw):
            raise InvalidConfig(f"{path} must be a number, got {_describe(raw)}", field=path)
        value = _float(raw, path)
    elif kind == "integer":
        value = _integer(raw)
        if value is None:
            raise InvalidConfig(f"{path} must be an integer, got {_describe(raw)}", field=path)
        _check_integer_range(value, path)
    elif kind == "number|string":
        if isinstance(raw, str):
            return raw
        if not _is_number(raw):
            raise InvalidConfig(f"{path} must be a number or a string, got {_describe(raw)}", field=path)
        value = _float(raw, path)
    elif kind == "string|integer":
        if isinstance(raw, str):
            return raw
        value = _integer(raw)
        if value is None:
            raise InvalidConfig(f"{path} must be a string or an integer, got {_describe(raw)}", field=path)
        _check_integer_range(value, path)
    elif kind == "list[string]":
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise InvalidConfig(f"{path} must be a list of strings, got {_describe(raw)}", field=path)
        return _bounded(list(raw), path)
    elif kind == "object":
        if not isinstance(raw, Mapping):
            raise InvalidConfig(f"{path} must be a mapping, got {_describe(raw)}", field=path)
        _check_json(raw, path)
        return dict(raw)
    elif kind == "list[object]":
        if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
            raise InvalidConfig(f"{path} must be a list of mappings, got {_describe(raw)}", field=path)
        return _bounded(list(raw), path)
    else:  # pragma: no cover - "any" is handled by validate(); a new kind needs a branch here
        raise AssertionError(kind)
    if field.choices and value not in field.choices:
        raise InvalidConfig(f"{path} must be one of {', '.join(field.choices)}, got {value!r}", field=path)
    if field.minimum is not None and (math.isnan(value) or value < field.minimum):
        raise InvalidConfig(f"{path} must be at least {field.minimum:g}, got {value!r}", field=path)
    if field.maximum is not None and value > field.maximum:
        raise InvalidConfig(f"{path} must be at most {field.maximum:g}, got {value!r}", field=path)
    return value


def _bounded(items: list[Any], path: str) -> list[Any]:
    if len(items) > MAX_LIST_ITEMS:
        raise InvalidConfig(f"{path} holds {len(items)} entries; at most {MAX_LIST_ITEMS} are accepted", field=path)
    return items


def _float(raw: int | float, path: str) -> float:
    try:
        return float(raw)
    except OverflowError:
        raise InvalidConfig(f"{path} is too large to be a number, got {_describe(raw)}", field=path) from None


def _check_integer_range(value: int, path: str) -> None:
    if abs(value) > MAX_INTEGER:
        raise InvalidConfig(f"{path} must lie between -2^53 and 2^53, got {_describe(value)}", field=path)


def _check_json(value: Any, path: str) -> None:
    """Reject what JSON cannot hold (YAML dates, non-string keys, NaN), since details and judges need JSON."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidConfig(f"{path} must be finite, got {value!r}", field=path)
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidConfig(f"{path} has a non-string key {key!r}", field=path)
            _check_json(item, f"{path}.{key}")
        return
    raise InvalidConfig(f"{path} must be a JSON value, got {_describe(value)}", field=path)


def _check_baseline(settings: dict[str, Any]) -> None:
    if settings["baseline_path"] is not None and settings["baseline"] is not None:
        raise InvalidConfig("comparator takes baseline_path or baseline, not both", field="config.baseline")
    if settings["baseline_path"] is None and settings["baseline"] is None:
        raise InvalidConfig("comparator needs `baseline_path` (or an inline `baseline`)", field="config.baseline_path")


def _check_pair(pair: Mapping[str, Any], index: int) -> dict[str, Any]:
    base = f"config.pairs[{index}]"
    accepted = {field.name: field for field in _PAIR_FIELDS}
    for key in pair:
        if key not in accepted:
            close = difflib.get_close_matches(str(key), accepted, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InvalidConfig(f"unknown key `{key}` in a contract pair{hint}", field=f"{base}.{key}")
    checked: dict[str, Any] = {}
    for name, field in accepted.items():
        raw = pair.get(name)
        checked[name] = _fresh(field.default) if raw is None else _check(field, raw, f"{base}.{name}")
    for side in ("producer", "consumer"):
        if not checked[side] and checked[f"{side}_content"] is None:
            raise InvalidConfig(f"a contract pair needs `{side}` (or `{side}_content`)", field=f"{base}.{side}")
    if not checked["contract"]:
        checked["contract"] = DEFAULT_CONTRACT
    return checked


def _describe(value: object) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}"
