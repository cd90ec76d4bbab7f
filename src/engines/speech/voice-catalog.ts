import type { EspeakListedVoice } from '@echogarden/espeak-ng-emscripten';
import type { VoiceInfo } from './espeak.ts';

/** A voice as callers see it, plus the eSpeak identifier (`gmw/en-US`) that selects it. */
export interface CatalogVoice {
  readonly info: VoiceInfo;
  readonly espeakIdentifier: string;
}

/** What eSpeak says about one voice, before naming. */
export interface RawVoice extends EspeakListedVoice {
  /** `espeak_VOICE.gender`: 0 unknown, 1 male, 2 female. */
  readonly gender: number;
}

/**
 * Names eSpeak's voices the way callers write languages. eSpeak's own identifiers are paths
 * into its data folder (`gmw/en-US`, `sit/yue-Latn-jyutping`), which nobody types; each voice's
 * first (best) language tag is what `espeak-ng -v` users know (`en-us`, `en-gb`, `de`). Where
 * two voices share a first language (`yue` for Cantonese and its Jyutping variant) both fall
 * back to the last part of their identifier, lowercased (`yue`, `yue-latn-jyutping`), which
 * eSpeak keeps unique. Sorted by id.
 */
export function catalogVoices(raw: readonly RawVoice[]): CatalogVoice[] {
  const primary = (voice: RawVoice) =>
    (voice.languages[0]?.name ?? lastSegment(voice.identifier)).toLowerCase();
  const sharing = new Map<string, number>();
  for (const voice of raw) sharing.set(primary(voice), (sharing.get(primary(voice)) ?? 0) + 1);

  const byId = new Map<string, CatalogVoice>();
  for (const voice of raw) {
    const language = primary(voice);
    const candidates = [
      sharing.get(language) === 1 ? language : lastSegment(voice.identifier).toLowerCase(),
      voice.identifier.toLowerCase(),
    ];
    const id = candidates.find((candidate) => !byId.has(candidate));
    if (id === undefined) continue; // the same voice listed twice
    byId.set(id, {
      espeakIdentifier: voice.identifier,
      info: {
        id,
        name: voice.name.trim() || voice.identifier,
        language,
        gender: voice.gender === 1 ? 'male' : voice.gender === 2 ? 'female' : null,
      },
    });
  }
  return [...byId.values()].sort((a, b) => (a.info.id < b.info.id ? -1 : 1));
}

function lastSegment(identifier: string): string {
  return identifier.slice(identifier.lastIndexOf('/') + 1);
}

/**
 * eSpeak NG's voice variants (`en-gb+f2`): the same language with another timbre. eSpeak
 * ignores an unknown variant silently, so only these are accepted.
 */
export const voiceVariants: readonly string[] = [
  ...['f1', 'f2', 'f3', 'f4', 'f5'],
  ...['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'],
];
