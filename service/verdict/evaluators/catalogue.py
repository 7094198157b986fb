"""The evaluator catalogue: one record per little-loops evaluator type (spec, run, state identity, cross-field checks).

This module is data. What each field means, its default and range, the verdicts and the flags ListEvaluators shows
live in the records; validation (`validation.py`) and the dispatcher (`dispatch.py`) read them and switch on no type.
A configuration arrives as a plain dict, built from a typed proto member or parsed from an `evaluate:` block; both
are checked against the same records, so both forms give identical results.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from verdict.config.keys import DEFAULT_JUDGE_MODEL
from verdict.errors import InvalidConfig
from verdict.evaluators import deterministic, graders, outside, promptfoo, stall, trajectory
from verdict.evaluators.record import Evaluator, Identity, Pure, Registry
from verdict.evaluators.spec import EvaluatorSpec, FieldSpec
from verdict.evaluators.validation import check_field, fresh

__all__ = [
    "CATALOGUE",
    "DEFAULT_CONTRACT",
    "MAX_COMPARATOR_PAIRS",
    "MAX_PANEL_MEMBERS",
    "MAX_SAMPLES",
    "SPECS",
    "TIE_POLICIES",
    "validate",
]

OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge")
DEFAULT_CONTRACT = "the producer and consumer must be compatible"
"""The rule a contract pair is judged against when it names none."""

MAX_COMPARATOR_PAIRS = 16
"""Each pair is two judge calls of up to the judge timeout: an unbounded min_pairs is an unbounded bill."""

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
MAX_PANEL_MEMBERS = 9
"""A panel asks at most this many times per question (judges x samples), all at once: a bound on what one request
can spend and on how many judge slots it holds."""
MAX_SAMPLES = 9
"""Self-consistency asks one judge up to this many times per question."""
TIE_POLICIES = ("error", "cautious", "first")
_PANEL_FIELDS = (
    FieldSpec(
        "judges",
        "list[object]",
        "A panel: judges ({host, model}) asked concurrently, each ruling cached and listed; empty: the judge host.",
    ),
    FieldSpec(
        "quorum",
        "string|integer",
        "How the panel's votes decide: majority (default), unanimous or k (at least k agreeing), over the answers.",
    ),
    FieldSpec("judge", "string", "A judge panel named in the server's judge_panels_file, instead of `judges`."),
    FieldSpec(
        "samples",
        "integer",
        f"Ask each judge this many times and take the majority (self-consistency); 1 to {MAX_SAMPLES}, default 1.",
        minimum=1,
        maximum=MAX_SAMPLES,
    ),
    FieldSpec(
        "tie",
        "string",
        "Without a winning verdict: error (default), cautious (the failing verdict) or first (the first answer).",
        choices=TIE_POLICIES,
    ),
)


def _check_panel(settings: dict[str, Any]) -> None:
    """The judge types: panel members are {host, model} strings with a host, at most MAX_PANEL_MEMBERS; `judges` and
    `judge` exclude each other; `quorum` is majority, unanimous or a positive whole number (kept as a string, the
    proto's spelling, whether it came as `2` from YAML or "2" from the wire)."""
    members = settings["judges"] or []
    if settings["judge"] is not None and members:
        raise InvalidConfig("set `judges` or `judge` (a named panel), not both", field="config.judge")
    if len(members) > MAX_PANEL_MEMBERS:
        raise InvalidConfig(
            f"a panel holds at most {MAX_PANEL_MEMBERS} judges, got {len(members)}", field="config.judges"
        )
    checked = []
    for index, member in enumerate(members):
        path = f"config.judges[{index}]"
        for key, value in member.items():
            if key not in ("host", "model"):
                raise InvalidConfig(f"unknown key `{key}` in a judge (it takes host and model)", field=f"{path}.{key}")
            if not isinstance(value, str):
                raise InvalidConfig(f"{path}.{key} must be a string", field=f"{path}.{key}")
        if not str(member.get("host", "")).strip():
            raise InvalidConfig("a judge needs a `host` (a judge CLI name or an http(s) URL)", field=f"{path}.host")
        entry = {"host": member["host"].strip(), "model": member.get("model", "")}
        if entry in checked:
            raise InvalidConfig(
                "a judge is listed twice: it would vote twice on one ruling (use `samples` to ask it again)",
                field=path,
            )
        checked.append(entry)
    settings["judges"] = checked
    asks = max(len(members), 1) * (settings["samples"] or 1)
    if asks > MAX_PANEL_MEMBERS:
        raise InvalidConfig(
            f"a panel asks at most {MAX_PANEL_MEMBERS} times per question (judges x samples), got {asks}",
            field="config.samples",
        )
    quorum = settings["quorum"]
    if quorum is not None:
        text = str(quorum).strip()
        if text not in ("majority", "unanimous") and not (text.isdigit() and int(text) >= 1):
            raise InvalidConfig(
                f"config.quorum must be majority, unanimous or a whole number of at least 1, got {quorum!r}",
                field="config.quorum",
            )
        if text.isdigit() and members and int(text) > len(members) * (settings["samples"] or 1):
            raise InvalidConfig(
                f"config.quorum {text} is more votes than the panel of {len(members)} can give", field="config.quorum"
            )
        settings["quorum"] = text


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


def _key_holds_a_character(settings: dict[str, Any]) -> None:
    """output_numeric: an empty `key` means none; a blank one would make `<key>\\s*=` a quadratic search."""
    if settings["key"] == "":
        settings["key"] = None
    if settings["key"] is not None and settings["key"].isspace():
        raise InvalidConfig(
            "config.key must hold a non-whitespace character: `<key>\\s*=` over a long run of whitespace is a "
            "quadratic search",
            field="config.key",
        )


def _one_baseline(settings: dict[str, Any]) -> None:
    """comparator: exactly one of baseline_path and baseline."""
    if settings["baseline_path"] is not None and settings["baseline"] is not None:
        raise InvalidConfig("comparator takes baseline_path or baseline, not both", field="config.baseline")
    if settings["baseline_path"] is None and settings["baseline"] is None:
        raise InvalidConfig("comparator needs `baseline_path` (or an inline `baseline`)", field="config.baseline_path")


def _at_least_one_pair(settings: dict[str, Any]) -> None:
    """comparator: min_pairs below 1 counts as 1, as little-loops has it."""
    settings["min_pairs"] = max(1, settings["min_pairs"])


def _check_pairs(settings: dict[str, Any]) -> None:
    """contract: every pair checked against the pair fields, the default contract filled in; at least one pair."""
    settings["pairs"] = [_check_pair(pair, index) for index, pair in enumerate(settings["pairs"])]
    if not settings["pairs"]:
        raise InvalidConfig("contract needs at least one pair", field="config.pairs")


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
        checked[name] = fresh(field.default) if raw is None else check_field(field, raw, f"{base}.{name}")
    for side in ("producer", "consumer"):
        if not checked[side] and checked[f"{side}_content"] is None:
            raise InvalidConfig(f"a contract pair needs `{side}` (or `{side}_content`)", field=f"{base}.{side}")
    if not checked["contract"]:
        checked["contract"] = DEFAULT_CONTRACT
    return checked


def _settings_only(identity: Callable[[Mapping[str, Any]], Mapping[str, Any]]) -> Identity:
    """An identity that depends on the settings alone (every stateful type but diff_stall)."""

    def bound(settings: Mapping[str, Any], workspace: str) -> Mapping[str, Any]:
        return identity(settings)

    return bound


CATALOGUE = Registry(
    (
        Evaluator(
            EvaluatorSpec(
                "exit_code",
                "The action's exit code: 0 is yes, 1 is no, anything else is error.",
                (_SOURCE,),
                _YES_NO_ERROR,
                exit_code_aware=True,
            ),
            run=Pure(deterministic.exit_code),
        ),
        Evaluator(
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
                        'Read the value from the last `key=<number>`, `key: <number>` or `"key": <number>` in the '
                        "output.",
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
            ),
            run=Pure(deterministic.output_numeric),
            checks=(_key_holds_a_character,),
        ),
        Evaluator(
            EvaluatorSpec(
                "output_json",
                "Compares the value at a dotted path in the output's JSON with a target.",
                (
                    FieldSpec(
                        "path", "string", "A dotted path into the JSON (`.a.b.0`); the leading dot is optional.", True
                    ),
                    _OPERATOR,
                    FieldSpec(
                        "target",
                        "any",
                        "The target, compared by deep equality or numerically; never interpolated.",
                        True,
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
            ),
            run=Pure(deterministic.output_json),
        ),
        Evaluator(
            EvaluatorSpec(
                "output_contains",
                "Searches the output for a regular expression (a substring when the expression is invalid).",
                (
                    FieldSpec(
                        "pattern", "string", "The regular expression; case-sensitive, no MULTILINE or DOTALL.", True
                    ),
                    FieldSpec("negate", "boolean", "Invert the result.", default=False),
                    FieldSpec(
                        "error_patterns",
                        "list[string]",
                        "Substrings that turn an un-negated `no` into `error` "
                        "(auth failures printed with exit code 0).",
                        default=[],
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
            ),
            run=outside.output_contains,
        ),
        Evaluator(
            EvaluatorSpec(
                "convergence",
                "Tracks a numeric output towards a target: reached, progressing, or stalled.",
                (
                    FieldSpec(
                        "target", "number|string", "The target: a number, or a string that is interpolated.", True
                    ),
                    FieldSpec(
                        "tolerance",
                        "number|string",
                        "Distance from the target that counts as reached: "
                        "a number (at least 0) or an interpolated string.",
                        default=0.0,
                        minimum=0,
                    ),
                    FieldSpec(
                        "previous", "string", "An ${...} expression for the previous value; no `stall` without it."
                    ),
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
            run=Pure(deterministic.convergence),
        ),
        Evaluator(
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
            run=Pure(deterministic.classify),
        ),
        Evaluator(
            EvaluatorSpec(
                "diff_stall",
                "Fingerprints the workspace's git repository (HEAD, index, work tree, untracked files); no change "
                "for max_stall calls means stalled.",
                (
                    FieldSpec(
                        "scope",
                        "list[string]",
                        "Pathspecs (relative to the workspace) the comparison is limited to; the whole tree when "
                        "empty.",
                        default=[],
                    ),
                    _MAX_STALL,
                    FieldSpec(
                        "compare",
                        "string",
                        "`content` (default): HEAD, the index, tracked content and untracked files; `stat`: the text "
                        "of `git diff --stat`, as little-loops compares.",
                        default="content",
                        choices=("content", "stat"),
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
                exit_code_aware=True,
                stateful=True,
            ),
            run=outside.diff_stall,
            identity=stall.diff_stall_identity,
            needs_workspace=True,
        ),
        Evaluator(
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
            run=Pure(stall.action_stall),
            identity=_settings_only(stall.action_stall_identity),
        ),
        Evaluator(
            EvaluatorSpec(
                "score_stall",
                "Takes one score per call as the output; no new best for max_stall calls means stalled.",
                (_MAX_STALL, _EPSILON, _HISTORY_FILE, _SOURCE),
                _YES_NO_ERROR,
                exit_code_aware=True,
                stateful=True,
            ),
            run=Pure(stall.score_stall),
            identity=_settings_only(stall.score_stall_identity),
        ),
        Evaluator(
            EvaluatorSpec(
                "open_question_stall",
                "Takes one open-question count per call as the output; "
                "no new lowest for max_stall calls means stalled.",
                (_MAX_STALL, _EPSILON, _HISTORY_FILE, _SOURCE),
                _YES_NO_ERROR,
                exit_code_aware=True,
                stateful=True,
            ),
            run=Pure(stall.open_question_stall),
            identity=_settings_only(stall.score_stall_identity),
        ),
        Evaluator(
            EvaluatorSpec(
                "mcp_result",
                "Reads an MCP tool-call envelope and the mcp-call exit code.",
                (_SOURCE,),
                ("success", "tool_error", "not_found", "timeout"),
                exit_code_aware=True,
                reads_timeouts=True,
            ),
            run=Pure(deterministic.mcp_result),
        ),
        Evaluator(
            EvaluatorSpec(
                "harbor_scorer",
                "A Harbor benchmark scorer: exit 0 with a float score is yes, a non-zero exit is no.",
                (_SOURCE,),
                _YES_NO_ERROR,
                exit_code_aware=True,
            ),
            run=Pure(deterministic.harbor_scorer),
        ),
        Evaluator(
            EvaluatorSpec(
                "llm_structured",
                "Asks an LLM judge, which must quote verbatim evidence for its verdict.",
                (
                    FieldSpec(
                        "prompt", "string", "What to judge; interpolated. Default: whether the action succeeded."
                    ),
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
                    FieldSpec(
                        "uncertain_suffix", "boolean", "Append `_uncertain` below min_confidence.", default=False
                    ),
                    _MODEL,
                    _FRESH,
                    _SOURCE,
                    *_PANEL_FIELDS,
                ),
                (*_LLM_VERDICTS, *(f"{verdict}_uncertain" for verdict in _LLM_VERDICTS), _ERROR),
                open_verdicts=True,
                exit_code_aware=True,
                uses_judge=True,
            ),
            run=None,
            checks=(_check_panel,),
        ),
        Evaluator(
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
                    *_PANEL_FIELDS,
                ),
                ("yes", "no", "tie", "no_baseline", _ERROR),
                uses_judge=True,
            ),
            run=None,
            checks=(_one_baseline, _at_least_one_pair, _check_panel),
        ),
        Evaluator(
            EvaluatorSpec(
                "trajectory",
                "The agent's tool calls (the earlier steps' from the state token, then this step's) against the "
                "expected calls: exact, in_order, any_order, subset or superset, arguments compared as JSON values.",
                (
                    FieldSpec(
                        "expected",
                        "list[object]",
                        "The expected calls: name, arguments (a JSON object or its text; unset: not compared) and "
                        "argument_modes (per top-level argument: exact, canonical, subset or ignore).",
                        True,
                    ),
                    FieldSpec(
                        "match",
                        "string",
                        "exact, in_order, any_order, subset (every call made is expected) or superset (every "
                        "expected call is made).",
                        default="exact",
                        choices=trajectory.MATCH_MODES,
                    ),
                    FieldSpec(
                        "arguments",
                        "string",
                        "How arguments compare: exact (values and JSON types), canonical (numbers by value), subset "
                        "(the expected arguments are among the call's) or ignore.",
                        default="canonical",
                        choices=trajectory.ARGUMENT_MODES,
                    ),
                    FieldSpec(
                        "threshold",
                        "number",
                        "The score (1 exactly when the match mode holds) at or above which the verdict is yes.",
                        default=1.0,
                        minimum=0,
                        maximum=1,
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
                exit_code_aware=True,
                stateful=True,
            ),
            run=trajectory.run,
            identity=_settings_only(trajectory.identity),
            checks=(trajectory.check_expected,),
        ),
        Evaluator(
            EvaluatorSpec(
                "promptfoo",
                "A promptfoo `assert:` list verbatim, scored as promptfoo scores it (not-, threshold, weight, "
                "metric, assert-set, the test threshold) against the output and the provider facts.",
                (
                    FieldSpec(
                        "assert",
                        "any",
                        "The assert list (or a test case holding assert, threshold and vars), as a list or as its "
                        "YAML or JSON text.",
                        True,
                    ),
                    FieldSpec(
                        "threshold",
                        "number",
                        "The test-level threshold: pass when the weighted score reaches it, whatever single "
                        "assertions did.",
                    ),
                    FieldSpec("vars", "object", "The test's vars, for `{{ name }}` in assertion values.", default={}),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
                text_member="assert",
            ),
            run=promptfoo.run,
            checks=(promptfoo.check_assertions,),
        ),
        Evaluator(
            EvaluatorSpec(
                "openai_grader",
                "An OpenAI grader object verbatim (string_check, text_similarity, score_model, label_model, multi) "
                "with its {{item.…}} / {{sample.…}} templates; score_model and label_model ask the judge.",
                (
                    FieldSpec(
                        "grader",
                        "any",
                        "The grader object, or its JSON text; `python` graders are refused, never executed.",
                        True,
                    ),
                    _SOURCE,
                ),
                _YES_NO_ERROR,
                text_member="grader",
            ),
            run=graders.run,
            checks=(graders.check,),
        ),
        Evaluator(
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
                    *_PANEL_FIELDS,
                ),
                _YES_NO_ERROR,
                exit_code_aware=True,
                uses_judge=True,
            ),
            run=None,
            checks=(_check_pairs, _check_panel),
        ),
    )
)

SPECS: Mapping[str, EvaluatorSpec] = CATALOGUE.specs
"""Every evaluator type's spec, by type: what ListEvaluators describes."""


def validate(config: Mapping[str, Any], *, judge_model: str = DEFAULT_JUDGE_MODEL) -> dict[str, Any]:
    """Check a configuration against the catalogue (see `Registry.validate`); the default judge model fills `model`."""
    return CATALOGUE.validate(config, judge_model=judge_model)
