/**
 * An error that is an answer, not a bug: a Kubernetes Status, or a store's "exists", "changed",
 * "compacted". No stack trace is captured for it, as Node captures none for its own errors'
 * answers: walking the async chain was a tenth of the CPU of a refused request, and a 410 or a lost
 * compare-and-swap is an everyday outcome. `withStack` keeps it for the errors that report a failure.
 */
export class AnswerError extends Error {
  constructor(message: string, withStack = false) {
    const limit = Error.stackTraceLimit;
    if (!withStack) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}
