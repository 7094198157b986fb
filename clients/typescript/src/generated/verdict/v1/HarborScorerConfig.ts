// Original file: verdict/v1/verdict.proto


/**
 * HarborScorerConfig configures harbor_scorer. It has no fields.
 */
export interface HarborScorerConfig {
}

/**
 * HarborScorerConfig configures harbor_scorer. It has no fields.
 */
export interface HarborScorerConfig__Output {
}
