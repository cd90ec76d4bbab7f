import {
  type Engine,
  type EngineContext,
  type EngineRequest,
  type EngineResult,
  stopEndsTask,
  wrongKind,
} from '../engine.ts';
import { probeServer } from '../remote/probe-server.ts';
import { remoteFailure } from '../remote/provider-failure.ts';
import { type RemoteDeps, RemoteOutputError } from '../remote/remote-deps.ts';
import { ComfyApi } from './comfyui-api.ts';
import { checkComfyModel, comfyOptions } from './comfyui-options.ts';
import { fetchOutputs } from './comfyui-outputs.ts';
import { ComfySocket, endpoint } from './comfyui-socket.ts';
import { followPrompt } from './follow-prompt.ts';
import { promptEnd } from './history-entry.ts';
import { markerValues } from './marker-values.ts';
import { fillWorkflow } from './workflow-template.ts';

/** Time to stop a prompt after the task was cancelled or timed out. */
const stopTimeoutMs = 15_000; // 15 seconds

type ComfyRequest = Extract<EngineRequest, { kind: 'image' | 'video' }>;

/**
 * The `comfyui` engine: a model's workflow template (workflow-template.ts) filled from the
 * request and queued on the operator's ComfyUI server. Each task has its own prompt id and
 * client id, derived from the task, so an attempt after a lost lease or a crash finds the
 * prompt the first attempt queued (in the history or the queue) and follows it instead of
 * queueing it again. ComfyUI has no content policy of its own: a failing node is an engine
 * failure (code 1), the node and its exception message in the log; a refusal (code 4) is only an input the
 * workflow needs and the request lacks.
 */
export function comfyuiEngine(deps: RemoteDeps): Engine {
  return {
    name: 'comfyui',
    kinds: ['image', 'video'],
    checkOptions: checkComfyModel,
    probe: (options, signal) =>
      probeServer(
        deps,
        'comfyui',
        endpoint(new URL(String(options.baseUrl)), 'system_stats').href,
        undefined,
        signal,
      ),
    async run(request, context) {
      if (request.kind !== 'image' && request.kind !== 'video') {
        return wrongKind('comfyui', request.kind);
      }
      try {
        return await runPrompt(deps, request, context);
      } catch (error) {
        if (error instanceof RemoteOutputError) return remoteFailure('unusable', error.message);
        throw error;
      }
    },
  };
}

async function runPrompt(
  deps: RemoteDeps,
  request: ComfyRequest,
  context: EngineContext,
): Promise<EngineResult> {
  const { signal } = context;
  const options = comfyOptions(request.kind, request.options);
  const api = new ComfyApi(deps, options.baseUrl);
  const clientId = `atelier-${request.taskId}`;
  // Older servers (before v0.3.44) pick the id themselves: the checkpoint remembers theirs.
  let promptId = context.checkpoint?.saved ?? clientId;
  const open = () => ComfySocket.open(options.baseUrl, clientId, signal);
  // Listening before submitting: no event of the prompt can come before the socket.
  const socket = await open();
  try {
    let state = await api.locate(promptId, signal);
    if (state.at === 'absent') {
      const filled = await markerValues(request, options.workflow, api, signal);
      if (!filled.ok) return filled;
      const workflow = fillWorkflow(options.workflow, filled.values);
      const submitted = await api.submit(workflow, promptId, clientId, signal);
      if (!submitted.ok) return remoteFailure('failed', submitted.message);
      promptId = submitted.promptId;
      if (promptId !== clientId) await context.checkpoint?.save(promptId);
      state = { at: 'pending' };
    }
    const entry =
      state.at === 'finished'
        ? state.entry
        : await followPrompt({
            api,
            promptId,
            socket,
            reopen: open,
            signal,
            reportProgress: (progress) => context.reportProgress(progress),
          });
    if (entry === undefined) {
      return remoteFailure(
        'interrupted',
        `Prompt ${promptId} left the ComfyUI queue at ${options.baseUrl} without running (deleted on the server?)`,
      );
    }
    const end = promptEnd(entry);
    if (!end.ok) return remoteFailure(end.interrupted ? 'interrupted' : 'failed', end.message);
    const outputs = await fetchOutputs(request, end.files, {
      api,
      deps,
      maxBytes: options.maxOutputBytes,
      signal,
    });
    context.reportProgress(1);
    return { ok: true, outputs };
  } catch (error) {
    // Cancelled or timed out: stop the prompt. Lease lost or shutting down: leave it running
    // for the attempt that takes the task over.
    if (signal.aborted && stopEndsTask(signal)) {
      await api.stop(promptId, AbortSignal.timeout(stopTimeoutMs)).catch(() => {});
    }
    throw error;
  } finally {
    socket.close();
  }
}
