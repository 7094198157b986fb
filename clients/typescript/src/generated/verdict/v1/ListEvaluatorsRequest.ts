// Original file: verdict/v1/verdict.proto


/**
 * ListEvaluatorsRequest asks for the evaluator catalogue.
 */
export interface ListEvaluatorsRequest {
}

/**
 * ListEvaluatorsRequest asks for the evaluator catalogue.
 */
export interface ListEvaluatorsRequest__Output {
}
