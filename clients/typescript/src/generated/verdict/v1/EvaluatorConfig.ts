// Original file: verdict/v1/verdict.proto

import type { ExitCodeConfig as _verdict_v1_ExitCodeConfig, ExitCodeConfig__Output as _verdict_v1_ExitCodeConfig__Output } from '../../verdict/v1/ExitCodeConfig';
import type { OutputNumericConfig as _verdict_v1_OutputNumericConfig, OutputNumericConfig__Output as _verdict_v1_OutputNumericConfig__Output } from '../../verdict/v1/OutputNumericConfig';
import type { OutputJsonConfig as _verdict_v1_OutputJsonConfig, OutputJsonConfig__Output as _verdict_v1_OutputJsonConfig__Output } from '../../verdict/v1/OutputJsonConfig';
import type { OutputContainsConfig as _verdict_v1_OutputContainsConfig, OutputContainsConfig__Output as _verdict_v1_OutputContainsConfig__Output } from '../../verdict/v1/OutputContainsConfig';
import type { ConvergenceConfig as _verdict_v1_ConvergenceConfig, ConvergenceConfig__Output as _verdict_v1_ConvergenceConfig__Output } from '../../verdict/v1/ConvergenceConfig';
import type { ClassifyConfig as _verdict_v1_ClassifyConfig, ClassifyConfig__Output as _verdict_v1_ClassifyConfig__Output } from '../../verdict/v1/ClassifyConfig';
import type { DiffStallConfig as _verdict_v1_DiffStallConfig, DiffStallConfig__Output as _verdict_v1_DiffStallConfig__Output } from '../../verdict/v1/DiffStallConfig';
import type { ActionStallConfig as _verdict_v1_ActionStallConfig, ActionStallConfig__Output as _verdict_v1_ActionStallConfig__Output } from '../../verdict/v1/ActionStallConfig';
import type { ScoreStallConfig as _verdict_v1_ScoreStallConfig, ScoreStallConfig__Output as _verdict_v1_ScoreStallConfig__Output } from '../../verdict/v1/ScoreStallConfig';
import type { OpenQuestionStallConfig as _verdict_v1_OpenQuestionStallConfig, OpenQuestionStallConfig__Output as _verdict_v1_OpenQuestionStallConfig__Output } from '../../verdict/v1/OpenQuestionStallConfig';
import type { McpResultConfig as _verdict_v1_McpResultConfig, McpResultConfig__Output as _verdict_v1_McpResultConfig__Output } from '../../verdict/v1/McpResultConfig';
import type { HarborScorerConfig as _verdict_v1_HarborScorerConfig, HarborScorerConfig__Output as _verdict_v1_HarborScorerConfig__Output } from '../../verdict/v1/HarborScorerConfig';
import type { LlmStructuredConfig as _verdict_v1_LlmStructuredConfig, LlmStructuredConfig__Output as _verdict_v1_LlmStructuredConfig__Output } from '../../verdict/v1/LlmStructuredConfig';
import type { ComparatorConfig as _verdict_v1_ComparatorConfig, ComparatorConfig__Output as _verdict_v1_ComparatorConfig__Output } from '../../verdict/v1/ComparatorConfig';
import type { ContractConfig as _verdict_v1_ContractConfig, ContractConfig__Output as _verdict_v1_ContractConfig__Output } from '../../verdict/v1/ContractConfig';
import type { TrajectoryConfig as _verdict_v1_TrajectoryConfig, TrajectoryConfig__Output as _verdict_v1_TrajectoryConfig__Output } from '../../verdict/v1/TrajectoryConfig';

/**
 * EvaluatorConfig selects one evaluator and configures it.
 */
export interface EvaluatorConfig {
  /**
   * exit_code: 0 -> yes, 1 -> no, anything else -> error.
   */
  'exitCode'?: (_verdict_v1_ExitCodeConfig | null);
  /**
   * output_numeric: compare the output (or a key=value field in it) with a target.
   */
  'outputNumeric'?: (_verdict_v1_OutputNumericConfig | null);
  /**
   * output_json: compare a JSON path in the output with a target.
   */
  'outputJson'?: (_verdict_v1_OutputJsonConfig | null);
  /**
   * output_contains: regex search in the output, with negation and error patterns.
   */
  'outputContains'?: (_verdict_v1_OutputContainsConfig | null);
  /**
   * convergence: progress of a numeric output towards a target.
   */
  'convergence'?: (_verdict_v1_ConvergenceConfig | null);
  /**
   * classify: one line of the output is the verdict.
   */
  'classify'?: (_verdict_v1_ClassifyConfig | null);
  /**
   * diff_stall: no change in `git diff --stat` for max_stall calls.
   */
  'diffStall'?: (_verdict_v1_DiffStallConfig | null);
  /**
   * action_stall: the same tracked values for max_repeat calls.
   */
  'actionStall'?: (_verdict_v1_ActionStallConfig | null);
  /**
   * score_stall: no new best score for max_stall calls.
   */
  'scoreStall'?: (_verdict_v1_ScoreStallConfig | null);
  /**
   * open_question_stall: no new lowest count of open questions for max_stall calls.
   */
  'openQuestionStall'?: (_verdict_v1_OpenQuestionStallConfig | null);
  /**
   * mcp_result: an MCP tool-call envelope.
   */
  'mcpResult'?: (_verdict_v1_McpResultConfig | null);
  /**
   * harbor_scorer: a Harbor benchmark scorer's exit code and score.
   */
  'harborScorer'?: (_verdict_v1_HarborScorerConfig | null);
  /**
   * llm_structured: an LLM judge with a verbatim-evidence contract.
   */
  'llmStructured'?: (_verdict_v1_LlmStructuredConfig | null);
  /**
   * comparator: a blind A/B judgement against a baseline output.
   */
  'comparator'?: (_verdict_v1_ComparatorConfig | null);
  /**
   * contract: an LLM judgement of producer/consumer pairs.
   */
  'contract'?: (_verdict_v1_ContractConfig | null);
  /**
   * A little-loops `evaluate:` block, YAML or JSON, with the same keys and defaults as the reference. It goes
   * through the same validation as the typed members and gives identical results.
   */
  'yaml'?: (string);
  /**
   * An ${...} expression whose value replaces `output` as the evaluator's input (the executor's `source:` key).
   * Must be unset when `yaml` carries a `source` key.
   */
  'source'?: (string);
  /**
   * promptfoo: a promptfoo `assert:` list (or a test case holding `assert:` and `threshold:`) verbatim, YAML or
   * JSON; the request's output, tool_calls, finish_reason, latency_ms, cost and logprobs are what it reads.
   */
  'promptfoo'?: (string);
  /**
   * openai_grader: an OpenAI grader object (string_check, text_similarity, score_model, label_model, multi) as
   * JSON; `{{item.…}}` reads the context's `item` namespace, `{{sample.…}}` the request's output and tool calls.
   */
  'openaiGrader'?: (string);
  /**
   * trajectory: the agent's tool calls (this step's, after the earlier steps' carried in the state token) against
   * the expected ones.
   */
  'trajectory'?: (_verdict_v1_TrajectoryConfig | null);
  /**
   * The evaluator type and its typed configuration, or a little-loops `evaluate:` block verbatim.
   */
  'kind'?: "exitCode"|"outputNumeric"|"outputJson"|"outputContains"|"convergence"|"classify"|"diffStall"|"actionStall"|"scoreStall"|"openQuestionStall"|"mcpResult"|"harborScorer"|"llmStructured"|"comparator"|"contract"|"yaml"|"promptfoo"|"openaiGrader"|"trajectory";
  '_source'?: "source";
}

/**
 * EvaluatorConfig selects one evaluator and configures it.
 */
export interface EvaluatorConfig__Output {
  /**
   * exit_code: 0 -> yes, 1 -> no, anything else -> error.
   */
  'exitCode'?: (_verdict_v1_ExitCodeConfig__Output | null);
  /**
   * output_numeric: compare the output (or a key=value field in it) with a target.
   */
  'outputNumeric'?: (_verdict_v1_OutputNumericConfig__Output | null);
  /**
   * output_json: compare a JSON path in the output with a target.
   */
  'outputJson'?: (_verdict_v1_OutputJsonConfig__Output | null);
  /**
   * output_contains: regex search in the output, with negation and error patterns.
   */
  'outputContains'?: (_verdict_v1_OutputContainsConfig__Output | null);
  /**
   * convergence: progress of a numeric output towards a target.
   */
  'convergence'?: (_verdict_v1_ConvergenceConfig__Output | null);
  /**
   * classify: one line of the output is the verdict.
   */
  'classify'?: (_verdict_v1_ClassifyConfig__Output | null);
  /**
   * diff_stall: no change in `git diff --stat` for max_stall calls.
   */
  'diffStall'?: (_verdict_v1_DiffStallConfig__Output | null);
  /**
   * action_stall: the same tracked values for max_repeat calls.
   */
  'actionStall'?: (_verdict_v1_ActionStallConfig__Output | null);
  /**
   * score_stall: no new best score for max_stall calls.
   */
  'scoreStall'?: (_verdict_v1_ScoreStallConfig__Output | null);
  /**
   * open_question_stall: no new lowest count of open questions for max_stall calls.
   */
  'openQuestionStall'?: (_verdict_v1_OpenQuestionStallConfig__Output | null);
  /**
   * mcp_result: an MCP tool-call envelope.
   */
  'mcpResult'?: (_verdict_v1_McpResultConfig__Output | null);
  /**
   * harbor_scorer: a Harbor benchmark scorer's exit code and score.
   */
  'harborScorer'?: (_verdict_v1_HarborScorerConfig__Output | null);
  /**
   * llm_structured: an LLM judge with a verbatim-evidence contract.
   */
  'llmStructured'?: (_verdict_v1_LlmStructuredConfig__Output | null);
  /**
   * comparator: a blind A/B judgement against a baseline output.
   */
  'comparator'?: (_verdict_v1_ComparatorConfig__Output | null);
  /**
   * contract: an LLM judgement of producer/consumer pairs.
   */
  'contract'?: (_verdict_v1_ContractConfig__Output | null);
  /**
   * A little-loops `evaluate:` block, YAML or JSON, with the same keys and defaults as the reference. It goes
   * through the same validation as the typed members and gives identical results.
   */
  'yaml'?: (string);
  /**
   * An ${...} expression whose value replaces `output` as the evaluator's input (the executor's `source:` key).
   * Must be unset when `yaml` carries a `source` key.
   */
  'source'?: (string);
  /**
   * promptfoo: a promptfoo `assert:` list (or a test case holding `assert:` and `threshold:`) verbatim, YAML or
   * JSON; the request's output, tool_calls, finish_reason, latency_ms, cost and logprobs are what it reads.
   */
  'promptfoo'?: (string);
  /**
   * openai_grader: an OpenAI grader object (string_check, text_similarity, score_model, label_model, multi) as
   * JSON; `{{item.…}}` reads the context's `item` namespace, `{{sample.…}}` the request's output and tool calls.
   */
  'openaiGrader'?: (string);
  /**
   * trajectory: the agent's tool calls (this step's, after the earlier steps' carried in the state token) against
   * the expected ones.
   */
  'trajectory'?: (_verdict_v1_TrajectoryConfig__Output | null);
  /**
   * The evaluator type and its typed configuration, or a little-loops `evaluate:` block verbatim.
   */
  'kind'?: "exitCode"|"outputNumeric"|"outputJson"|"outputContains"|"convergence"|"classify"|"diffStall"|"actionStall"|"scoreStall"|"openQuestionStall"|"mcpResult"|"harborScorer"|"llmStructured"|"comparator"|"contract"|"yaml"|"promptfoo"|"openaiGrader"|"trajectory";
  '_source'?: "source";
}
