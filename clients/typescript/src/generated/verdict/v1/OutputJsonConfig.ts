// Original file: verdict/v1/verdict.proto

import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../google/protobuf/Value';

/**
 * OutputJsonConfig configures output_json.
 */
export interface OutputJsonConfig {
  /**
   * A dotted path into the output's JSON (`.a.b.0`); a leading dot is optional. Required.
   */
  'path'?: (string);
  /**
   * Comparison operator: eq, ne, lt, le, gt or ge (only eq and ne for non-numbers). Required.
   */
  'operator'?: (string);
  /**
   * The target, compared by deep equality or numerically; never interpolated. Required.
   */
  'target'?: (_google_protobuf_Value | null);
}

/**
 * OutputJsonConfig configures output_json.
 */
export interface OutputJsonConfig__Output {
  /**
   * A dotted path into the output's JSON (`.a.b.0`); a leading dot is optional. Required.
   */
  'path': (string);
  /**
   * Comparison operator: eq, ne, lt, le, gt or ge (only eq and ne for non-numbers). Required.
   */
  'operator': (string);
  /**
   * The target, compared by deep equality or numerically; never interpolated. Required.
   */
  'target': (_google_protobuf_Value__Output | null);
}
