import type { PhonemeTiming, VoiceInfo } from './espeak.ts';

/** What the main thread asks the eSpeak worker to do. One job at a time per worker. */
export type WorkerJob =
  | { readonly kind: 'voices' }
  | {
      readonly kind: 'synthesize';
      /** Pieces of the text, each one eSpeak call, spoken one after another. */
      readonly chunks: readonly string[];
      /** A `VoiceInfo.id`. */
      readonly voice: string;
      readonly wordsPerMinute: number;
      /** eSpeak's 0..99. */
      readonly pitch: number;
    };

export type WorkerRequest = WorkerJob & { readonly id: number };

export interface SynthesizedChunks {
  readonly sampleRate: number;
  readonly samples: Int16Array;
  readonly phonemes: readonly PhonemeTiming[];
}

/** The worker's answer to request `id`; failures (an unknown voice) come back as `error`. */
export type WorkerReply =
  | { readonly id: number; readonly kind: 'voices'; readonly voices: readonly VoiceInfo[] }
  | { readonly id: number; readonly kind: 'synthesize'; readonly audio: SynthesizedChunks }
  | {
      readonly id: number;
      readonly kind: 'error';
      readonly message: string;
      /** eSpeak failed mid-call and may be left in a broken state: use a new worker. */
      readonly retire: boolean;
    };

/** The reply a job of kind `K` resolves with. */
export type ReplyTo<K extends WorkerJob['kind']> = Extract<WorkerReply, { kind: K }>;
