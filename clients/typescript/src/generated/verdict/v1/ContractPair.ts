// Original file: verdict/v1/verdict.proto


/**
 * ContractPair is one producer/consumer pair whose compatibility a judge checks.
 */
export interface ContractPair {
  /**
   * The producer file, relative to the workspace.
   */
  'producer'?: (string);
  /**
   * The consumer file, relative to the workspace.
   */
  'consumer'?: (string);
  /**
   * The rule the pair must satisfy. Default: the producer and consumer must be compatible.
   */
  'contract'?: (string);
  /**
   * A regular expression whose matches (joined by newlines) stand for the producer.
   */
  'producerPattern'?: (string);
  /**
   * A regular expression whose matches (joined by newlines) stand for the consumer.
   */
  'consumerPattern'?: (string);
  /**
   * The producer's content inline, instead of reading the producer file.
   */
  'producerContent'?: (string);
  /**
   * The consumer's content inline, instead of reading the consumer file.
   */
  'consumerContent'?: (string);
  '_producerPattern'?: "producerPattern";
  '_consumerPattern'?: "consumerPattern";
  '_producerContent'?: "producerContent";
  '_consumerContent'?: "consumerContent";
}

/**
 * ContractPair is one producer/consumer pair whose compatibility a judge checks.
 */
export interface ContractPair__Output {
  /**
   * The producer file, relative to the workspace.
   */
  'producer': (string);
  /**
   * The consumer file, relative to the workspace.
   */
  'consumer': (string);
  /**
   * The rule the pair must satisfy. Default: the producer and consumer must be compatible.
   */
  'contract': (string);
  /**
   * A regular expression whose matches (joined by newlines) stand for the producer.
   */
  'producerPattern'?: (string);
  /**
   * A regular expression whose matches (joined by newlines) stand for the consumer.
   */
  'consumerPattern'?: (string);
  /**
   * The producer's content inline, instead of reading the producer file.
   */
  'producerContent'?: (string);
  /**
   * The consumer's content inline, instead of reading the consumer file.
   */
  'consumerContent'?: (string);
  '_producerPattern'?: "producerPattern";
  '_consumerPattern'?: "consumerPattern";
  '_producerContent'?: "producerContent";
  '_consumerContent'?: "consumerContent";
}
