import { setTimeout as sleep } from 'node:timers/promises';
import type { FinishCode } from '../../domain/finish-code.ts';
import { kindNames } from '../../domain/kinds/kinds.ts';
import type { Engine, EngineContext, EngineRequest, EngineResult } from '../engine.ts';

/** Test engines make every kind. */
const everyKind = kindNames;

// A valid 1x1 transparent PNG.
const pixel = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * A deterministic stand-in for a slow or failing engine, for tests and the queue benchmark.
 * Options: `durationMs` (default 0, in `steps` sleeps each followed by a progress report;
 * default 10), `failCode` + `failMessage` (an expected failure),
 * `throw` (an unexpected one, which the runner retries), `ignoreAbort` (keeps running after its
 * signal aborts, like a stuck engine, without keeping the process alive). Produces one 1x1 PNG per image.
 */
export const fakeEngine: Engine = {
  name: 'fake',
  kinds: everyKind,
  async run(request: EngineRequest, context: EngineContext): Promise<EngineResult> {
    const {
      durationMs = 0,
      failCode,
      failMessage,
      throw: shouldThrow,
      ignoreAbort = false,
      steps: stepsOption = 10,
    } = request.options as {
      durationMs?: number;
      failCode?: FinishCode;
      failMessage?: string;
      throw?: boolean;
      ignoreAbort?: boolean;
      steps?: number;
    };
    const steps = durationMs > 0 ? Math.max(1, stepsOption) : 0;
    for (let step = 1; step <= steps; step++) {
      await sleep(
        durationMs / steps,
        undefined,
        ignoreAbort ? { ref: false } : { signal: context.signal },
      );
      context.reportProgress(step / steps);
    }
    if (shouldThrow) throw new Error('fake engine: unexpected failure');
    if (typeof failCode === 'number') {
      return { ok: false, finishCode: failCode, message: failMessage ?? 'fake engine failure' };
    }
    return {
      ok: true,
      outputs: Array.from(
        { length: request.kind === 'image' ? request.settings.count : 1 },
        () => ({
          kind: 'image' as const,
          mimeType: 'image/png',
          extension: 'png',
          bytes: pixel,
          width: 1,
          height: 1,
        }),
      ),
    };
  },
};

/** Does nothing and produces nothing: measures the queue alone. */
export const noopEngine: Engine = {
  name: 'noop',
  kinds: everyKind,
  run: async () => ({ ok: true, outputs: [] }),
};
