// Original file: verdict/v1/verdict.proto

import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../google/protobuf/Value';

/**
 * OutputNumericConfig configures output_numeric.
 */
export interface OutputNumericConfig {
  /**
   * Comparison operator: eq, ne, lt, le, gt or ge. Required.
   */
  'operator'?: (string);
  /**
   * The target: a number, or a string that is interpolated and then parsed as a number. Required.
   */
  'target'?: (_google_protobuf_Value | null);
  /**
   * Read the value from the last `key=<number>` or `key: <number>` field of the output instead of the whole output;
   * the key and the number may be quoted, so a JSON member `"key": 5` counts. No match is an `error` verdict.
   */
  'key'?: (string);
  '_key'?: "key";
}

/**
 * OutputNumericConfig configures output_numeric.
 */
export interface OutputNumericConfig__Output {
  /**
   * Comparison operator: eq, ne, lt, le, gt or ge. Required.
   */
  'operator': (string);
  /**
   * The target: a number, or a string that is interpolated and then parsed as a number. Required.
   */
  'target': (_google_protobuf_Value__Output | null);
  /**
   * Read the value from the last `key=<number>` or `key: <number>` field of the output instead of the whole output;
   * the key and the number may be quoted, so a JSON member `"key": 5` counts. No match is an `error` verdict.
   */
  'key'?: (string);
  '_key'?: "key";
}
