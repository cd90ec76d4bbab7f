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

/** An http(s) URL with no query: an origin, maybe with a path. */
export function isHttpOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '';
  } catch {
    return false;
  }
}

/** Exactly an http(s) origin as a browser sends it in `Origin`: no path, query or trailing slash. */
export function isWebOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** A JSON value given as a string in the environment (the config file may hold it as JSON). */
export const fromJson = (value: unknown) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};
