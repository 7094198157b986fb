"""OpenAI's grader objects: string_check, text_similarity, score_model, label_model and multi, python refused.

`grader` checks and runs a grader object (templates, error flags), `similarity` holds the text_similarity metrics
(each naming its library and version), `formula` the multi grader's calculate_output, parsed and never evaluated as
code, and `evaluator` the `openai_grader` evaluator record's run. Behaviour and every difference from OpenAI's
hosted graders: docs/evaluators.md.
"""

from verdict.evaluators.graders.evaluator import check, run, run_response
from verdict.evaluators.graders.grader import ERROR_FLAGS, GRADER_TYPES, Graded, Sample, check_grader, grade

__all__ = ["ERROR_FLAGS", "GRADER_TYPES", "Graded", "Sample", "check", "check_grader", "grade", "run", "run_response"]
