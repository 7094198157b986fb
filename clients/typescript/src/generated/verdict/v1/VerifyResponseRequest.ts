// Original file: verdict/v1/verdict.proto


/**
 * VerifyResponseRequest carries one completion and the envelope facts the provider returned with it.
 */
export interface VerifyResponseRequest {
  /**
   * The completion text exactly as the model returned it.
   */
  'text'?: (string);
  /**
   * The provider's finish reason ("stop", "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "tool_calls",
   * ...). Every provider's spelling of "ran out of budget" counts as truncation.
   */
  'finishReason'?: (string);
  /**
   * True when the turn called tools. Such a turn is not a prose answer and is exempt from every check.
   */
  'hasToolCalls'?: (boolean);
  /**
   * Completion tokens the provider reported; gates the optional second opinion. Zero when unknown.
   */
  'completionTokens'?: (number);
  /**
   * The user's request, shown to the optional second-opinion judge. Never checked itself.
   */
  'requestText'?: (string);
  /**
   * A label naming the model that produced the completion. Used as a metric label only when it is on the server's
   * allow-list; never interpreted.
   */
  'model'?: (string);
}

/**
 * VerifyResponseRequest carries one completion and the envelope facts the provider returned with it.
 */
export interface VerifyResponseRequest__Output {
  /**
   * The completion text exactly as the model returned it.
   */
  'text': (string);
  /**
   * The provider's finish reason ("stop", "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "tool_calls",
   * ...). Every provider's spelling of "ran out of budget" counts as truncation.
   */
  'finishReason': (string);
  /**
   * True when the turn called tools. Such a turn is not a prose answer and is exempt from every check.
   */
  'hasToolCalls': (boolean);
  /**
   * Completion tokens the provider reported; gates the optional second opinion. Zero when unknown.
   */
  'completionTokens': (number);
  /**
   * The user's request, shown to the optional second-opinion judge. Never checked itself.
   */
  'requestText': (string);
  /**
   * A label naming the model that produced the completion. Used as a metric label only when it is on the server's
   * allow-list; never interpreted.
   */
  'model': (string);
}
