/**
 * How a finished task ended (DESIGN.md "Tasks and finish codes"); clients see the number as
 * `finishCode`. Every code but `Ok` refunds the task's credits, once.
 */
export const FinishCode = {
  Ok: 0,
  /** The engine failed, or failed unexpectedly in every attempt. */
  EngineFailure: 1,
  /** The client cancelled it. */
  Cancelled: 2,
  /** It ran past its model's maximum run time. */
  TimedOut: 3,
  /** Its input was refused: unreadable, or gone between submission and run. */
  RejectedInput: 4,
  /** No worker finished it within its attempts (leases expired). */
  Lost: 5,
} as const;

export type FinishCode = (typeof FinishCode)[keyof typeof FinishCode];
