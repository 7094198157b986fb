"""promptfoo's assertions: an `assert:` list verbatim, scored as promptfoo scores it.

`checks` holds one record per assertion type (its handler, default threshold, what it reads), `text_metrics` the
BLEU, GLEU, ROUGE-N and Levenshtein computations promptfoo defines, `assertions` the parsing, refusals and the
weighted aggregation (not-, weight, metric, assert-set, test threshold). Behaviour and every difference from
promptfoo: docs/evaluators.md.
"""

from verdict.evaluators.promptfoo.assertions import MAX_ASSERTIONS, check_assertions, run, score_assertions
from verdict.evaluators.promptfoo.checks import CHECKS, MODEL_GRADED, NEVER_EXECUTED

__all__ = ["CHECKS", "MAX_ASSERTIONS", "MODEL_GRADED", "NEVER_EXECUTED", "check_assertions", "run", "score_assertions"]
