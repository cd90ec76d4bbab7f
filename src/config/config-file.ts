import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The JSON object `CONFIG_FILE` names, keys spelled like the variables; `{}` when none is
 * named. A file that cannot be read or is not an object adds a problem instead of throwing,
 * so it is listed with every other one.
 */
export function readConfigFile(
  file: string | undefined,
  cwd: string,
  problems: string[],
): Record<string, unknown> {
  if (file === undefined || file === '') return {};
  try {
    const content: unknown = JSON.parse(readFileSync(path.resolve(cwd, file), 'utf8'));
    if (typeof content === 'object' && content !== null && !Array.isArray(content)) {
      return content as Record<string, unknown>;
    }
    problems.push(`CONFIG_FILE: ${file} must hold a JSON object`);
  } catch (error) {
    problems.push(`CONFIG_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
  return {};
}
