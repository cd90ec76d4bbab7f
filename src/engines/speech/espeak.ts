import { WorkerProcess } from '../../shared/worker-process.ts';
import { chunkText } from './chunk-text.ts';
import type { ReplyTo, WorkerJob, WorkerReply } from './espeak-protocol.ts';

/** One eSpeak NG voice (a language or accent; eSpeak's variants are not listed). */
export interface VoiceInfo {
  /**
   * What `synthesize` takes: the voice's language tag, e.g. "en-gb", "de", "en-us"; with a
   * variant of `voiceVariants` after a plus ("en-gb+f2") for another timbre.
   */
  readonly id: string;
  /** Readable, e.g. "English (Great Britain)". */
  readonly name: string;
  /** Language tag, lowercase, e.g. "en-gb". */
  readonly language: string;
  readonly gender: 'male' | 'female' | null;
}

/** One phoneme (IPA, with eSpeak's stress marks, e.g. "ˈoʊ") and when it is spoken. */
export interface PhonemeTiming {
  readonly phoneme: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface SpeechAudio {
  /** eSpeak's native rate (22050). */
  readonly sampleRate: number;
  /** Mono 16-bit PCM. */
  readonly samples: Int16Array;
  /** In time order; times are relative to the start of `samples`. */
  readonly phonemes: readonly PhonemeTiming[];
}

export interface SynthesisRequest {
  readonly text: string;
  /** A `VoiceInfo.id`. */
  readonly voice: string;
  /** 1 is normal (175 words per minute); 0.5..2. */
  readonly speed: number;
  /** 1 is normal (eSpeak pitch 50); 0.5..2. */
  readonly pitch: number;
}

const normalWordsPerMinute = 175; // eSpeak's default rate
const normalPitch = 50; // eSpeak's default, on its 0..99 scale
const factorRange = { min: 0.5, max: 2 } as const;

/**
 * How long the eSpeak worker may stay idle before it is stopped: the next speech then waits for
 * a new one: 1.2–1.8 s to its voice list, against 0.8–1.2 s for the worker thread it replaced
 * (load average 19 on 2 cores; both far less on a quiet machine).
 */
const workerIdleMs = 5_000; // 5 seconds
/**
 * One eSpeak worker process, one job at a time: eSpeak is single-threaded and keeps its voice
 * settings between calls. Aborting a speech kills the worker mid-sentence; a worker whose eSpeak
 * threw mid-call is replaced (`retire`), since its state may be half-updated.
 */
const worker = new WorkerProcess<WorkerJob, WorkerReply>(
  new URL('./espeak.worker.ts', import.meta.url),
  { name: 'eSpeak worker', idleMs: workerIdleMs },
);

/** Runs `job` in the worker; rejects with the worker's message when it reports a failure. */
async function ask<J extends WorkerJob>(job: J, signal?: AbortSignal): Promise<ReplyTo<J['kind']>> {
  const reply = await worker.run(job, signal);
  if (reply.kind === 'error') throw new Error(reply.message);
  if (reply.kind !== job.kind) throw new Error(`eSpeak worker answered ${reply.kind}`);
  return reply as ReplyTo<J['kind']>;
}
let voices: Promise<readonly VoiceInfo[]> | undefined;

/** eSpeak NG's voices, sorted by id. Asked once per process; a failure is retried next call. */
export function listEspeakVoices(): Promise<readonly VoiceInfo[]> {
  voices ??= ask({ kind: 'voices' }).then(
    (reply) => Object.freeze(reply.voices.map((voice) => Object.freeze({ ...voice }))),
    (error: unknown) => {
      voices = undefined;
      throw error;
    },
  );
  return voices;
}

/**
 * Speaks `text` off the main thread. Long texts are spoken in pieces of at most about 1000
 * characters (see `chunkText`) and joined, phoneme times shifted to match. Aborting `signal`
 * stops eSpeak mid-sentence and rejects with `signal.reason`. Rejects with an Error naming the
 * voice if it is not a `VoiceInfo.id`.
 */
export async function synthesize(
  request: SynthesisRequest,
  signal: AbortSignal,
): Promise<SpeechAudio> {
  const chunks = chunkText(request.text);
  if (chunks.length === 0) throw new Error('Nothing to say: the text is empty');
  const reply = await ask(
    {
      kind: 'synthesize',
      chunks,
      voice: request.voice,
      wordsPerMinute: Math.round(normalWordsPerMinute * factor('speed', request.speed)),
      pitch: Math.min(99, Math.round(normalPitch * factor('pitch', request.pitch))),
    },
    signal,
  );
  return reply.audio;
}

/** Stops the eSpeak worker process (on shutdown); a later call starts a new one. */
export function closeEspeak(): Promise<void> {
  return worker.close();
}

function factor(name: string, value: number): number {
  if (!(value >= factorRange.min && value <= factorRange.max)) {
    throw new RangeError(`${name} must be between ${factorRange.min} and ${factorRange.max}`);
  }
  return value;
}
