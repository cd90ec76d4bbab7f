/**
 * Worker process entry (started by EspeakWorkerHost): eSpeak NG (compiled to JavaScript) runs
 * synchronously and can take seconds on long texts, so it lives here instead of on the event
 * loop the HTTP server uses. Cancellation kills this process; nothing here needs to check.
 */
import initializeEspeak, {
  type ESpeakNGWorker,
  type EspeakEvent,
} from '@echogarden/espeak-ng-emscripten';
import type { PhonemeTiming } from './espeak.ts';
import type { SynthesizedChunks, WorkerReply, WorkerRequest } from './espeak-protocol.ts';
import { phonemeTimings } from './phoneme-timeline.ts';
import { type CatalogVoice, catalogVoices, voiceVariants } from './voice-catalog.ts';

const send = process.send?.bind(process);
if (send === undefined) throw new Error('espeak.worker.ts must run in a worker process (fork)');

/** eSpeak writes diagnostics through Emscripten's printErr; the last lines explain failures. */
const diagnostics: string[] = [];

// The package's own locateFile (its pre-js, which replaces any we pass) finds espeak-ng.data
// next to espeak-ng.js from its import.meta.url, and reads it with fs: that holds in a worker
// process.
const espeakModule = await initializeEspeak({
  print: () => {},
  printErr: (text) => {
    diagnostics.push(text);
    if (diagnostics.length > 5) diagnostics.shift();
  },
});
const espeak = new espeakModule.eSpeakNGWorker();
const catalog: readonly CatalogVoice[] = catalogVoices(
  espeak.list_voices().map((voice, index) => ({
    ...voice,
    gender: espeak.get_voices(index).get_gender(),
  })),
);
const byId = new Map(catalog.map((voice) => [voice.info.id, voice]));

// The server gone (its end closes the channel): nothing is left to answer.
process.on('disconnect', () => process.exit(0));

process.on('message', (request: WorkerRequest) => {
  try {
    if (request.kind === 'voices') {
      reply({ id: request.id, kind: 'voices', voices: catalog.map((voice) => voice.info) });
      return;
    }
    const [id = '', variant] = request.voice.split('+');
    const voice = byId.get(id);
    if (voice === undefined || (variant !== undefined && !voiceVariants.includes(variant))) {
      reply({
        id: request.id,
        kind: 'error',
        message: `Unknown eSpeak NG voice "${request.voice}"`,
        retire: false,
      });
      return;
    }
    const audio = synthesizeChunks(voice, variant, request);
    reply({ id: request.id, kind: 'synthesize', audio });
  } catch (error) {
    const said = diagnostics.length > 0 ? ` (eSpeak said: ${diagnostics.join(' | ')})` : '';
    reply({ id: request.id, kind: 'error', message: `${String(error)}${said}`, retire: true });
  }
});

function reply(message: WorkerReply): void {
  send!(message);
}

function synthesizeChunks(
  voice: CatalogVoice,
  variant: string | undefined,
  request: Extract<WorkerRequest, { kind: 'synthesize' }>,
): SynthesizedChunks {
  select(
    espeak,
    variant === undefined ? voice.espeakIdentifier : `${voice.espeakIdentifier}+${variant}`,
  );
  // Rate and pitch stay set between calls in this long-lived instance: set both every time.
  espeak.set_rate(request.wordsPerMinute);
  espeak.set_pitch(request.pitch);
  const sampleRate = espeak.get_samplerate();

  const blocks: Int16Array[] = [];
  const phonemes: PhonemeTiming[] = [];
  let total = 0;
  for (const chunk of request.chunks) {
    const events: EspeakEvent[] = [];
    let length = 0;
    espeak.synthesize(escapeSsml(chunk), (samples, chunkEvents) => {
      blocks.push(samples);
      length += samples.length;
      events.push(...chunkEvents);
      return false;
    });
    const offsetMs = (total / sampleRate) * 1000;
    phonemes.push(...phonemeTimings(events, (length / sampleRate) * 1000, offsetMs));
    total += length;
  }

  const samples = new Int16Array(total);
  let at = 0;
  for (const block of blocks) {
    samples.set(block, at);
    at += block.length;
  }
  return { sampleRate, samples, phonemes };
}

function select(instance: ESpeakNGWorker, identifier: string): void {
  const status = instance.set_voice(identifier);
  if (status !== 0) throw new Error(`eSpeak NG could not load voice ${identifier} (${status})`);
}

/**
 * The binding always parses SSML, so a literal `<` would start a tag and `&` an entity; the
 * caller's text is plain text.
 */
function escapeSsml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
