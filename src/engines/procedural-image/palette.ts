import { createHash } from 'node:crypto';

/** A small, fast PRNG (sfc32) seeded from a hash, so a prompt and seed always draw the same. */
export function seededRandom(...parts: ReadonlyArray<string | number>): () => number {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
}

const namedHues: Readonly<Record<string, number>> = {
  red: 0,
  crimson: 350,
  orange: 28,
  amber: 40,
  gold: 45,
  yellow: 55,
  lime: 90,
  green: 120,
  forest: 130,
  teal: 175,
  cyan: 185,
  sky: 200,
  blue: 220,
  navy: 230,
  indigo: 250,
  violet: 270,
  purple: 285,
  magenta: 310,
  pink: 330,
  rose: 345,
  sunset: 20,
  ocean: 205,
};

/**
 * Hues the prompt asks for: colour words give their own hue, other words a hue from their
 * hash, so different prompts give visibly different palettes.
 */
export function paletteOf(prompt: string): number[] {
  const words = prompt.toLowerCase().match(/[a-z]+/g) ?? [];
  const named = words.map((w) => namedHues[w]).filter((h): h is number => h !== undefined);
  const hashed = words
    .filter((w) => w.length > 2 && namedHues[w] === undefined)
    .map((w) => createHash('sha1').update(w).digest().readUInt16LE(0) % 360);
  const hues = [...named, ...named, ...hashed];
  return hues.length > 0 ? hues.slice(0, 6) : [210, 30];
}
