// Original file: verdict/v1/verdict.proto


/**
 * VerifierLanguage describes one language of VerifyResponse's fenced blocks. A language not listed is unverifiable.
 */
export interface VerifierLanguage {
  /**
   * The name a BlockCheck reports for it ("javascript"). Languages whose entries report the info-string word
   * itself (a "console" transcript, "jsonc") list that word's family under their first name.
   */
  'name'?: (string);
  /**
   * The fence info-string words that select it, lower case ("js", "node", "mjs", ...).
   */
  'aliases'?: (string)[];
  /**
   * Whether its blocks are parsed. When false, they are always unverifiable and unchecked_reason says why.
   */
  'checked'?: (boolean);
  /**
   * What the check can see (checked languages).
   */
  'sees'?: (string);
  /**
   * What the check cannot see (checked languages).
   */
  'blindTo'?: (string);
  /**
   * Each excuse that turns a parser failure into unverifiable rather than malformed.
   */
  'leniencies'?: (string)[];
  /**
   * Why the language is not checked (unchecked languages), as the BlockCheck detail says it.
   */
  'uncheckedReason'?: (string);
  /**
   * Its value of the `lang` label of the verdict_block_checks_total metric.
   */
  'metricLabel'?: (string);
}

/**
 * VerifierLanguage describes one language of VerifyResponse's fenced blocks. A language not listed is unverifiable.
 */
export interface VerifierLanguage__Output {
  /**
   * The name a BlockCheck reports for it ("javascript"). Languages whose entries report the info-string word
   * itself (a "console" transcript, "jsonc") list that word's family under their first name.
   */
  'name': (string);
  /**
   * The fence info-string words that select it, lower case ("js", "node", "mjs", ...).
   */
  'aliases': (string)[];
  /**
   * Whether its blocks are parsed. When false, they are always unverifiable and unchecked_reason says why.
   */
  'checked': (boolean);
  /**
   * What the check can see (checked languages).
   */
  'sees': (string);
  /**
   * What the check cannot see (checked languages).
   */
  'blindTo': (string);
  /**
   * Each excuse that turns a parser failure into unverifiable rather than malformed.
   */
  'leniencies': (string)[];
  /**
   * Why the language is not checked (unchecked languages), as the BlockCheck detail says it.
   */
  'uncheckedReason': (string);
  /**
   * Its value of the `lang` label of the verdict_block_checks_total metric.
   */
  'metricLabel': (string);
}
