// Original file: verdict/v1/verdict.proto


/**
 * ToolDefinition is one tool declared to the model.
 */
export interface ToolDefinition {
  /**
   * The function's name.
   */
  'name'?: (string);
  /**
   * What the tool does; never interpreted.
   */
  'description'?: (string);
  /**
   * The JSON Schema of the arguments, as JSON text; empty means any object.
   */
  'parameters'?: (string);
  /**
   * OpenAI strict mode: the schema follows strict mode's rules (every property required, no additional ones).
   */
  'strict'?: (boolean);
}

/**
 * ToolDefinition is one tool declared to the model.
 */
export interface ToolDefinition__Output {
  /**
   * The function's name.
   */
  'name': (string);
  /**
   * What the tool does; never interpreted.
   */
  'description': (string);
  /**
   * The JSON Schema of the arguments, as JSON text; empty means any object.
   */
  'parameters': (string);
  /**
   * OpenAI strict mode: the schema follows strict mode's rules (every property required, no additional ones).
   */
  'strict': (boolean);
}
