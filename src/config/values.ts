import { z } from 'zod';

/** Environment values are strings; a JSON config file may hold numbers for the same names. */
export const fromString = (value: unknown) => (typeof value === 'number' ? String(value) : value);

/** A whole number within [min, max], given as a string (or a number in the config file). */
export function wholeNumber(min: number, max: number) {
  const message = `expected a whole number from ${min} to ${max}`;
  return z.preprocess(
    fromString,
    z
      .string()
      .regex(/^\d+$/, message)
      .transform(Number)
      .refine((n) => n >= min && n <= max, message),
  );
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
