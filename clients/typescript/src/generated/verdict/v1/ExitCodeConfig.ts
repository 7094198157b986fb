// Original file: verdict/v1/verdict.proto


/**
 * ExitCodeConfig configures exit_code. It has no fields.
 */
export interface ExitCodeConfig {
}

/**
 * ExitCodeConfig configures exit_code. It has no fields.
 */
export interface ExitCodeConfig__Output {
}
