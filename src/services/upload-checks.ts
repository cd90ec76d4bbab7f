import { fileTypeFromBuffer } from 'file-type';
import { decodeWhole, ImageError, sharp } from '../shared/sharp.ts';

/** The kinds an upload may be: what the engines can read. */
export type UploadKind = 'image' | 'audio';

/** The types an upload may turn out to be, by kind. */
export const acceptedTypes: Readonly<Record<UploadKind, readonly string[]>> = {
  image: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
  audio: ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/opus', 'audio/flac', 'audio/x-flac'],
};

/** Spellings of the same type that clients send; compared after this mapping. */
const aliases: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/mp3': 'audio/mpeg',
  'audio/x-flac': 'audio/flac',
};

/**
 * How audio uploads are measured: a port, so services/ never imports engines/ (core.ts wires
 * ffmpeg in through `engines/speech/audio.ts#measureAudio`).
 */
export interface MediaProbe {
  /** Decodes the whole audio and answers how long it lasts; throws when it cannot be read. */
  audioDurationMs(bytes: Buffer, signal: AbortSignal): Promise<number>;
}

export interface ContentLimits {
  /** Largest width or height of an uploaded image. */
  readonly maxImagePixels: number;
  readonly maxAudioSeconds: number;
}

/** What the bytes turned out to be; it replaces what the client declared. */
export interface Inspected {
  readonly mimeType: string;
  /** The file extension of that type, for the storage key. */
  readonly ext: string;
  readonly width: number | null;
  readonly height: number | null;
  readonly durationMs: number | null;
}

/**
 * Finds what uploaded bytes really are, by content (never by what the client declared), and
 * checks them against the kind and the limits: an image must decode whole, an audio must
 * decode and is measured. Returns what was found, or why the bytes are refused.
 */
export async function inspectUpload(
  kind: UploadKind,
  body: Buffer,
  deps: { probe: MediaProbe; limits: ContentLimits; signal?: AbortSignal | undefined },
): Promise<Inspected | { readonly refused: string }> {
  const sniffed = await fileTypeFromBuffer(body);
  const mimeType = sniffed === undefined ? undefined : normalType(sniffed.mime);
  if (sniffed === undefined || mimeType === undefined || !acceptedTypes[kind].includes(mimeType)) {
    return {
      refused: `the bytes are ${mimeType ?? 'of no recognised type'}, not ${kind} (${acceptedTypes[kind].join(', ')})`,
    };
  }
  const found =
    kind === 'image'
      ? await checkImage(body, deps.limits)
      : await checkAudio(body, deps.probe, deps.limits, deps.signal);
  return 'refused' in found ? found : { mimeType, ext: sniffed.ext, ...found };
}

type Measured = Pick<Inspected, 'width' | 'height' | 'durationMs'> | { readonly refused: string };

async function checkImage(body: Buffer, limits: ContentLimits): Promise<Measured> {
  const { maxImagePixels } = limits;
  const undecodable = { refused: 'the image cannot be decoded' } as const;
  // Only sharp's refusal is the image's fault; a failing sharp worker fails the upload instead.
  const refuseIfImageError = (error: unknown) => {
    if (error instanceof ImageError) return undecodable;
    throw error;
  };
  // The header only: the size is checked below, before anything is decoded, whatever it is.
  const header = await sharp(body, { failOn: 'error', limitInputPixels: false })
    .metadata()
    .catch(refuseIfImageError);
  if ('refused' in header) return header;
  const { width, height } = header;
  if (width === undefined || height === undefined) {
    return { refused: 'the image has no dimensions' };
  }
  if (width > maxImagePixels || height > maxImagePixels || width < 16 || height < 16) {
    return {
      refused: `the image is ${width}x${height}; each side must be from 16 to ${maxImagePixels} pixels`,
    };
  }
  const limitInputPixels = maxImagePixels ** 2;
  const refused = await decodeWhole(body, { width, height }, { limitInputPixels }).catch(
    refuseIfImageError,
  );
  return refused ?? { width, height, durationMs: null };
}

/** Decoding the whole audio proves it is readable and measures it. */
async function checkAudio(
  body: Buffer,
  probe: MediaProbe,
  limits: ContentLimits,
  signal: AbortSignal | undefined,
): Promise<Measured> {
  let durationMs = 0;
  try {
    durationMs = await probe.audioDurationMs(body, signal ?? neverAborted);
  } catch {
    // reported below
  }
  if (durationMs <= 0) return { refused: 'the audio cannot be read' };
  if (durationMs > limits.maxAudioSeconds * 1000) {
    return {
      refused: `the audio lasts ${Math.round(durationMs / 1000)} s; at most ${limits.maxAudioSeconds} s`,
    };
  }
  return { width: null, height: null, durationMs };
}

const neverAborted = new AbortController().signal;

export function normalType(mimeType: string): string {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  return aliases[type] ?? type;
}

/**
 * The client's filename, for the download's Content-Disposition: no path, and anything that is
 * not printable ASCII (or is a quote) replaced, so it is always a valid header value.
 */
export function safeFilename(name: string): string | null {
  const base = name.split(/[\\/]/).pop()!.trim();
  if (base.length === 0 || base.length > 200) return null;
  return base.replace(/[^\x20-\x7e]|["\\]/g, '_');
}
