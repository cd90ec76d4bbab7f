const units = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `30m`, `12h` or `90d` into milliseconds; null when it is none of those. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,6})([mhd])$/.exec(text);
  if (match === null) return null;
  const amount = Number(match[1]);
  return amount > 0 ? amount * units[match[2] as keyof typeof units] : null;
}
