// Original file: verdict/v1/verdict.proto

import type { EvaluatorInfo as _verdict_v1_EvaluatorInfo, EvaluatorInfo__Output as _verdict_v1_EvaluatorInfo__Output } from '../../verdict/v1/EvaluatorInfo';
import type { VerifierLanguage as _verdict_v1_VerifierLanguage, VerifierLanguage__Output as _verdict_v1_VerifierLanguage__Output } from '../../verdict/v1/VerifierLanguage';

/**
 * ListEvaluatorsResponse is the evaluator catalogue.
 */
export interface ListEvaluatorsResponse {
  /**
   * Every evaluator type the server runs, sorted by type.
   */
  'evaluators'?: (_verdict_v1_EvaluatorInfo)[];
  /**
   * Every fenced-block language VerifyResponse knows, checked or not, sorted by name: what each check sees.
   */
  'languages'?: (_verdict_v1_VerifierLanguage)[];
}

/**
 * ListEvaluatorsResponse is the evaluator catalogue.
 */
export interface ListEvaluatorsResponse__Output {
  /**
   * Every evaluator type the server runs, sorted by type.
   */
  'evaluators': (_verdict_v1_EvaluatorInfo__Output)[];
  /**
   * Every fenced-block language VerifyResponse knows, checked or not, sorted by name: what each check sees.
   */
  'languages': (_verdict_v1_VerifierLanguage__Output)[];
}
