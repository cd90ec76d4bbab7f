/**
 * The part of `@echogarden/espeak-ng-emscripten` (0.3.5) that the speech engine uses. The
 * package ships no types; these were read off its `espeak-ng.js` (WebIDL bindings plus the
 * `list_voices`/`synthesize` helpers its post-js adds to `eSpeakNGWorker`).
 */
declare module '@echogarden/espeak-ng-emscripten' {
  /** One `espeak_VOICE` struct, as `get_voices(i)` returns it; `ptr` is 0 past the last one. */
  export interface EspeakVoiceStruct {
    readonly ptr: number;
    get_identifier(): string;
    get_name(): string;
    /** 0 unknown, 1 male, 2 female. */
    get_gender(): number;
  }

  /** One language a voice speaks; a lower priority number is a better match. */
  export interface EspeakVoiceLanguage {
    readonly priority: number;
    readonly name: string;
  }

  export interface EspeakListedVoice {
    readonly identifier: string;
    readonly name: string;
    readonly languages: readonly EspeakVoiceLanguage[];
  }

  export type EspeakEventType =
    | 'list_terminated'
    | 'word'
    | 'sentence'
    | 'mark'
    | 'play'
    | 'end'
    | 'msg_terminated'
    | 'phoneme'
    | 'samplerate';

  export interface EspeakEvent {
    readonly type: EspeakEventType;
    /** Milliseconds from the start of this `synthesize` call's audio. */
    readonly audio_position: number;
    /** 1-based character position in the input text. */
    readonly text_position: number;
    readonly word_length: number;
    /** Phoneme (IPA) or mark name for `phoneme`/`mark`, a counter for `word`/`sentence`. */
    readonly id: string | number | undefined;
  }

  export interface ESpeakNGWorker {
    /** 0 on success (espeak_ERROR codes otherwise). Accepts an identifier such as `gmw/en-US`. */
    set_voice(name: string): number;
    set_rate(wordsPerMinute: number): void;
    set_pitch(pitch: number): void;
    get_samplerate(): number;
    get_voices(index: number): EspeakVoiceStruct;
    list_voices(): EspeakListedVoice[];
    /**
     * Synthesizes synchronously; SSML is parsed. The callback gets each block of samples with
     * the events inside it; returning true stops synthesis.
     */
    synthesize(
      text: string,
      callback: (samples: Int16Array, events: EspeakEvent[]) => boolean,
    ): void;
  }

  export interface EspeakModule {
    readonly eSpeakNGWorker: new () => ESpeakNGWorker;
  }

  export interface EspeakModuleOptions {
    print?: (text: string) => void;
    printErr?: (text: string) => void;
  }

  const initialize: (options?: EspeakModuleOptions) => Promise<EspeakModule>;
  export default initialize;
}
