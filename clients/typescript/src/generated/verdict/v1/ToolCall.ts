// Original file: verdict/v1/verdict.proto


/**
 * ToolCall is one tool (function) call a model made.
 */
export interface ToolCall {
  /**
   * The provider's id for the call (OpenAI `call_...`, Anthropic `toolu_...`); may be empty.
   */
  'id'?: (string);
  /**
   * The name of the function the model called.
   */
  'name'?: (string);
  /**
   * The arguments exactly as the provider returned them: a JSON text.
   */
  'arguments'?: (string);
}

/**
 * ToolCall is one tool (function) call a model made.
 */
export interface ToolCall__Output {
  /**
   * The provider's id for the call (OpenAI `call_...`, Anthropic `toolu_...`); may be empty.
   */
  'id': (string);
  /**
   * The name of the function the model called.
   */
  'name': (string);
  /**
   * The arguments exactly as the provider returned them: a JSON text.
   */
  'arguments': (string);
}
