/**
 * An ISO 8601 date (midnight UTC) or date and time with its offset, as operators type them on a
 * command line or in a query string; null for anything else (`Date` alone would take
 * "yesterday" in some engines, or a bare time as local).
 */
export function parseInstant(value: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value)) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}
