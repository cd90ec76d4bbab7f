import { FinishCode } from '../../domain/finish-code.ts';
import { sharp } from '../../shared/sharp.ts';
import type { EngineFailure, EngineRequest } from '../engine.ts';
import type { ComfyApi } from './comfyui-api.ts';
import { hasMarker, type MarkerValues, type Workflow } from './workflow-template.ts';

/**
 * The values of a request's markers (workflow-template.ts). `{{image}}` is the name ComfyUI gave
 * the uploaded input (the video's still, or an image request's first element), sent as PNG so a
 * built-in element's SVG loads too, under a name of the task's own: a retried task overwrites
 * its own upload rather than adding another.
 */
export async function markerValues(
  request: Extract<EngineRequest, { kind: 'image' | 'video' }>,
  workflow: Workflow,
  api: ComfyApi,
  signal: AbortSignal,
): Promise<{ readonly ok: true; readonly values: MarkerValues } | EngineFailure> {
  const { settings } = request;
  const common = {
    prompt: settings.prompt,
    seed: settings.seed,
    width: settings.width,
    height: settings.height,
  };
  const values: Record<string, string | number> =
    request.kind === 'image'
      ? {
          ...common,
          negative_prompt: request.settings.negativePrompt ?? '',
          count: request.settings.count,
        }
      : {
          ...common,
          fps: request.settings.fps,
          duration: request.settings.durationSeconds,
          frames: request.settings.durationSeconds * request.settings.fps,
        };
  if (!hasMarker(workflow, 'image')) return { ok: true, values };
  const picture = request.kind === 'image' ? request.elements[0]?.picture : request.image;
  if (picture === undefined || picture === null) {
    return {
      ok: false,
      finishCode: FinishCode.RejectedInput,
      message:
        request.kind === 'image'
          ? 'This model draws from an input picture: name an element in elementIds. Credits were refunded.'
          : 'This model animates an image: give imageMediaId. Credits were refunded.',
    };
  }
  const png = await sharp(picture).png().toBuffer();
  values.image = await api.upload(`atelier-${request.taskId}.png`, png, signal);
  return { ok: true, values };
}
