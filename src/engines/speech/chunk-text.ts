/** Characters per eSpeak call (about a minute of speech at 175 words per minute). */
export const maxChunkChars = 1000;

const sentences = new Intl.Segmenter(undefined, { granularity: 'sentence' });
const words = new Intl.Segmenter(undefined, { granularity: 'word' });

/**
 * Splits text into pieces of at most `maxChars` characters for separate eSpeak calls, so one
 * call never has to hold a very long text and a cancelled job loses little. Pieces end at
 * sentence (and so paragraph) boundaries where possible, else at word boundaries; a single
 * "word" longer than `maxChars` (a URL, a run of digits) is cut where it must be. Uses
 * Unicode segmentation rather than a `.`/space regex so scripts without spaces split too.
 */
export function chunkText(text: string, maxChars: number = maxChunkChars): string[] {
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    const trimmed = current.trim();
    if (trimmed.length > 0) chunks.push(trimmed);
    current = '';
  };
  const add = (piece: string) => {
    if (current.length + piece.length > maxChars) flush();
    current += piece;
  };

  for (const { segment: sentence } of sentences.segment(text)) {
    if (sentence.length <= maxChars) {
      add(sentence);
      continue;
    }
    for (const { segment: word } of words.segment(sentence)) {
      if (word.length <= maxChars) {
        add(word);
        continue;
      }
      // Code point by code point, so a surrogate pair is never cut in half.
      for (const char of word) add(char);
    }
  }
  flush();
  return chunks;
}
