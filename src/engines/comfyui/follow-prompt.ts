import type { ComfyApi } from './comfyui-api.ts';
import type { ComfyEvent, ComfySocket } from './comfyui-socket.ts';
import type { HistoryEntry } from './history-entry.ts';

/** A look at the server even when no event came (a socket silently gone, a missed event). */
const recheckMs = 30_000; // 30 seconds

/** Progress stays below this until the outputs are fetched and checked. */
const runShare = 0.95;

export interface FollowOptions {
  readonly api: ComfyApi;
  readonly promptId: string;
  /** The socket opened before the prompt was submitted, so no event of it was missed. */
  readonly socket: ComfySocket;
  /** Opens the socket again (same client id) after it dropped. */
  reopen(): Promise<ComfySocket>;
  readonly signal: AbortSignal;
  reportProgress(progress: number): void;
}

/**
 * Waits for the prompt to finish and answers its history entry, or undefined when it left the
 * server without one (deleted from the queue by someone else, history cleared). The history is
 * the one truth: WebSocket events only say when to read it again (`executing {node: null}`,
 * `execution_*`, a queue `status` change) and carry progress (`progress {value, max}` of the
 * node running, which restarts per node: the task's progress never goes back). A dropped socket
 * is reopened with the same client id, and ComfyUI routes the prompt's events to it again.
 * Rejects with the signal's reason when aborted.
 */
export async function followPrompt(o: FollowOptions): Promise<HistoryEntry | undefined> {
  let socket = o.socket;
  let shown = 0;
  let wake: (() => void) | undefined;
  let pending = true; // read the server once before waiting for anything
  const poke = (): void => {
    pending = true;
    wake?.();
  };
  const onEvent = (event: ComfyEvent): void => {
    const ours = event.data.prompt_id === o.promptId;
    if (event.type === 'status') poke();
    if (!ours) return;
    if (event.type === 'progress') {
      const value = Number(event.data.value);
      const max = Number(event.data.max);
      if (max > 0 && value >= 0 && (value / max) * runShare > shown) {
        shown = Math.min(runShare, (value / max) * runShare);
        o.reportProgress(shown);
      }
    }
    if (event.type === 'executing' && event.data.node === null) poke();
    if (event.type.startsWith('execution_') && event.type !== 'execution_cached') poke();
  };
  let unlisten = socket.listen(onEvent);
  let dropped = false;
  const watchClose = (s: ComfySocket): void => {
    void s.closed.then(() => {
      if (s === socket) {
        dropped = true;
        poke();
      }
    });
  };
  watchClose(socket);
  const onAbort = (): void => wake?.();
  o.signal.addEventListener('abort', onAbort);
  const timer = setInterval(poke, recheckMs);
  try {
    for (;;) {
      o.signal.throwIfAborted();
      if (dropped) {
        dropped = false;
        unlisten();
        socket = await o.reopen();
        unlisten = socket.listen(onEvent);
        watchClose(socket);
      }
      if (pending) {
        pending = false;
        const state = await o.api.locate(o.promptId, o.signal);
        if (state.at === 'finished') return state.entry;
        if (state.at === 'absent') return undefined;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (pending || dropped || o.signal.aborted) resolve();
      });
      wake = undefined;
    }
  } finally {
    clearInterval(timer);
    o.signal.removeEventListener('abort', onAbort);
    unlisten();
    if (socket !== o.socket) socket.close(); // the caller closes the one it opened
  }
}
