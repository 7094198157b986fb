// Original file: verdict/v1/verdict.proto

import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../google/protobuf/Value';

/**
 * EvaluatorField describes one configuration field of an evaluator.
 */
export interface EvaluatorField {
  /**
   * The key, as in an evaluate block.
   */
  'name'?: (string);
  /**
   * The value type: "string", "number", "integer", "boolean", "number|string", "string|integer", "any",
   * "list[string]", "object", "list[object]".
   */
  'type'?: (string);
  /**
   * True when the field must be set.
   */
  'required'?: (boolean);
  /**
   * The default, or null when there is none.
   */
  'defaultValue'?: (_google_protobuf_Value | null);
  /**
   * What the field does.
   */
  'description'?: (string);
}

/**
 * EvaluatorField describes one configuration field of an evaluator.
 */
export interface EvaluatorField__Output {
  /**
   * The key, as in an evaluate block.
   */
  'name': (string);
  /**
   * The value type: "string", "number", "integer", "boolean", "number|string", "string|integer", "any",
   * "list[string]", "object", "list[object]".
   */
  'type': (string);
  /**
   * True when the field must be set.
   */
  'required': (boolean);
  /**
   * The default, or null when there is none.
   */
  'defaultValue': (_google_protobuf_Value__Output | null);
  /**
   * What the field does.
   */
  'description': (string);
}
