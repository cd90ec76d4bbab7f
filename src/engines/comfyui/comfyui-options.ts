import type { ImageModel, ModelDefinition, VideoModel } from '../../domain/model.ts';
import {
  fixedSize,
  hasMarker,
  markerProblems,
  type TemplateKind,
  type Workflow,
} from './workflow-template.ts';

/** A model's `engineOptions` for the comfyui engine, checked at start. */
export interface ComfyOptions {
  /** The ComfyUI server, e.g. `http://gpu-box:8188`; only the operator sets it. */
  readonly baseUrl: URL;
  /** The API-format workflow with its markers. */
  readonly workflow: Workflow;
  /** Largest output file fetched from `/view`. */
  readonly maxOutputBytes: number;
}

const defaultMaxOutputBytes: Readonly<Record<TemplateKind, number>> = {
  image: 50 * 1024 * 1024, // 50 MiB: a 16k PNG stays under it
  video: 500 * 1024 * 1024, // 500 MiB
};

/** The options as the engine uses them; only called on options `checkComfyModel` accepted. */
export function comfyOptions(
  kind: TemplateKind,
  options: Readonly<Record<string, unknown>>,
): ComfyOptions {
  return {
    baseUrl: new URL(String(options.baseUrl)),
    workflow: options.workflow as Workflow,
    maxOutputBytes:
      typeof options.maxOutputBytes === 'number'
        ? options.maxOutputBytes
        : defaultMaxOutputBytes[kind],
  };
}

/** Every problem of a comfyui model's options, workflow markers and sizes; empty when usable. */
export function checkComfyModel(model: ModelDefinition): string[] {
  if (model.kind !== 'image' && model.kind !== 'video') return []; // bindingProblems says why
  const options = model.engineOptions;
  const problems: string[] = [];
  let url: URL | undefined;
  try {
    url = new URL(String(options.baseUrl));
  } catch {
    // reported below
  }
  if (url === undefined || !['http:', 'https:'].includes(url.protocol)) {
    problems.push('engineOptions.baseUrl must be the http(s) URL of the ComfyUI server');
  }
  const max = options.maxOutputBytes;
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) {
    problems.push('engineOptions.maxOutputBytes must be a positive whole number of bytes');
  }
  problems.push(...markerProblems(options.workflow, model.kind));
  const workflow = options.workflow;
  if (typeof workflow === 'object' && workflow !== null && !Array.isArray(workflow)) {
    problems.push(...sizeProblems(model, workflow as Workflow));
    if (model.kind === 'image') problems.push(...imageProblems(model, workflow as Workflow));
    else problems.push(...videoProblems(model, workflow as Workflow));
  }
  return problems;
}

/** Sizes the model offers that the workflow cannot make. */
function sizeProblems(model: ImageModel | VideoModel, workflow: Workflow): string[] {
  const width = hasMarker(workflow, 'width');
  const height = hasMarker(workflow, 'height');
  if (width !== height) return ['workflow has only one of {{width}} and {{height}}'];
  if (width) return [];
  const sizes =
    model.kind === 'image'
      ? model.capabilities.sizes
      : model.capabilities.formats.map((f) => ({ width: f.width, height: f.height }));
  const fixed = fixedSize(workflow);
  if (fixed === undefined) {
    return sizes.length === 1
      ? []
      : ['workflow has no {{width}}/{{height}} markers, so it cannot make the model’s sizes'];
  }
  const other = sizes.filter((s) => s.width !== fixed.width || s.height !== fixed.height);
  return other.map(
    (s) =>
      `workflow always makes ${fixed.width}x${fixed.height} (no {{width}}/{{height}} markers), not ${s.width}x${s.height}`,
  );
}

function imageProblems(model: ImageModel, workflow: Workflow): string[] {
  const problems: string[] = [];
  const many = model.capabilities.sizes.filter((s) => s.maxCount > 1);
  if (many.length > 0 && !hasMarker(workflow, 'count')) {
    problems.push(
      'workflow has no {{count}} marker, so it makes one image per run: set maxCount 1 on every size',
    );
  }
  if (hasMarker(workflow, 'image') && model.capabilities.maxElements < 1) {
    problems.push('workflow has an {{image}} marker, filled from an element: set maxElements ≥ 1');
  }
  const formats = model.capabilities.formats.filter((f) => f !== 'png');
  if (formats.length > 0) {
    problems.push(
      `ComfyUI's SaveImage writes PNG: the model cannot offer ${formats.join(', ')} (formats: ["png"])`,
    );
  }
  return problems;
}

function videoProblems(model: VideoModel, workflow: Workflow): string[] {
  const problems: string[] = [];
  const { modes, formats } = model.capabilities;
  const image = hasMarker(workflow, 'image');
  if (modes.includes('image') && !image) {
    problems.push('the model offers image-to-video but the workflow has no {{image}} marker');
  }
  if (modes.includes('text') && image) {
    problems.push(
      'the workflow has an {{image}} marker, which text-to-video requests cannot fill: set modes ["image"]',
    );
  }
  const rates = new Set(formats.flatMap((f) => f.fps));
  if (rates.size > 1 && !hasMarker(workflow, 'fps')) {
    problems.push(`the model offers ${[...rates].join(', ')} fps but the workflow has no {{fps}}`);
  }
  const lengths = formats.some((f) => f.minDurationSeconds !== f.maxDurationSeconds);
  if (lengths && !hasMarker(workflow, 'frames') && !hasMarker(workflow, 'duration')) {
    problems.push(
      'the model offers several durations but the workflow has no {{frames}} or {{duration}}',
    );
  }
  return problems;
}
