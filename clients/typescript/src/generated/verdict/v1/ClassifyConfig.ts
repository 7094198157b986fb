// Original file: verdict/v1/verdict.proto

import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../google/protobuf/Value';

/**
 * ClassifyConfig configures classify.
 */
export interface ClassifyConfig {
  /**
   * Which non-blank line is the verdict: "last" (default), "first", or an integer index (negative from the end).
   */
  'line'?: (_google_protobuf_Value | null);
}

/**
 * ClassifyConfig configures classify.
 */
export interface ClassifyConfig__Output {
  /**
   * Which non-blank line is the verdict: "last" (default), "first", or an integer index (negative from the end).
   */
  'line': (_google_protobuf_Value__Output | null);
}
