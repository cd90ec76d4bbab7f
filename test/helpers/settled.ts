/**
 * What `promise` came to by the end of the event loop's current turn: its rejection's reason,
 * `'fulfilled'`, or `'pending'`. A test that expects the reason shows that the promise settled
 * at once, before any I/O (a child process's exit, a worker's answer) could have arrived,
 * without reading a clock.
 */
export function settledThisTurn(promise: Promise<unknown>): Promise<unknown> {
  return Promise.race([
    promise.then(
      () => 'fulfilled',
      (error: unknown) => error,
    ),
    new Promise((resolve) => setImmediate(() => resolve('pending'))),
  ]);
}
