// Original file: verdict/v1/verdict.proto


/**
 * JudgeMember is one judge of a panel: a host and the model it is asked with.
 */
export interface JudgeMember {
  /**
   * The judge host (claude, codex, openai, ...).
   */
  'host'?: (string);
  /**
   * The model alias passed to that host; empty means the host's default.
   */
  'model'?: (string);
}

/**
 * JudgeMember is one judge of a panel: a host and the model it is asked with.
 */
export interface JudgeMember__Output {
  /**
   * The judge host (claude, codex, openai, ...).
   */
  'host': (string);
  /**
   * The model alias passed to that host; empty means the host's default.
   */
  'model': (string);
}
