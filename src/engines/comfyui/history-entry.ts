/**
 * ComfyUI's record of a finished prompt (`GET /history/{id}` → `{id: entry}`), read loosely:
 * `status` is missing before 2024-01, and custom nodes put what they like in `outputs`.
 */
export interface HistoryEntry {
  readonly outputs?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly status?: {
    readonly status_str?: string;
    readonly completed?: boolean;
    readonly messages?: readonly (readonly [string, Readonly<Record<string, unknown>>])[];
  };
}

/** One file an output node wrote, as `/view` takes it. */
export interface OutputFile {
  readonly filename: string;
  readonly subfolder: string;
  readonly type: string;
  /** Core SaveVideo/SaveWEBM/SaveAnimated* list their files under `images` with `animated`. */
  readonly animated: boolean;
  /** Video Helper Suite's `gifs` entries carry a MIME-like format, e.g. `video/h264-mp4`. */
  readonly format?: string;
}

/** How the prompt ended, as the history tells it. */
export type PromptEnd =
  | { readonly ok: true; readonly files: readonly OutputFile[] }
  | { readonly ok: false; readonly interrupted: boolean; readonly message: string };

/** The outcome of a finished prompt: its output files, or why it failed. */
export function promptEnd(entry: HistoryEntry): PromptEnd {
  const messages = entry.status?.messages ?? [];
  const error = messages.find(([type]) => type === 'execution_error')?.[1];
  const interrupted = messages.find(([type]) => type === 'execution_interrupted')?.[1];
  if (error !== undefined) {
    const node = `node ${String(error.node_id)} (${String(error.node_type)})`;
    const reason = String(error.exception_message ?? 'no message').trim();
    return { ok: false, interrupted: false, message: `ComfyUI failed at ${node}: ${reason}` };
  }
  if (interrupted !== undefined || entry.status?.status_str === 'error') {
    return {
      ok: false,
      interrupted: interrupted !== undefined,
      message: 'The prompt was interrupted on the ComfyUI server.',
    };
  }
  return { ok: true, files: outputFiles(entry) };
}

/** Every file the output nodes list, in node order, with the folder and flags `/view` needs. */
export function outputFiles(entry: HistoryEntry): OutputFile[] {
  const files: OutputFile[] = [];
  for (const ui of Object.values(entry.outputs ?? {})) {
    const animated = Array.isArray(ui.animated) && ui.animated.some((flag) => flag === true);
    for (const item of list(ui.images)) files.push({ ...item, animated });
    for (const item of list(ui.gifs)) files.push({ ...item, animated: true });
  }
  return files;
}

function list(value: unknown): Omit<OutputFile, 'animated'>[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    const { filename, subfolder, type, format } = (item ?? {}) as Record<string, unknown>;
    if (typeof filename !== 'string') return [];
    return [
      {
        filename,
        subfolder: typeof subfolder === 'string' ? subfolder : '',
        type: typeof type === 'string' ? type : 'output',
        ...(typeof format === 'string' ? { format } : {}),
      },
    ];
  });
}

/**
 * The files that answer a request of the kind: stills for an image, animated files for a
 * video. Saved files (`output`) win over previews (`temp`) when a workflow has both.
 */
export function filesFor(kind: 'image' | 'video', files: readonly OutputFile[]): OutputFile[] {
  const wanted = files.filter((file) => file.animated === (kind === 'video'));
  const saved = wanted.filter((file) => file.type === 'output');
  return saved.length > 0 ? saved : wanted;
}
