import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Atelier's cache directory on this machine: `$XDG_CACHE_HOME/atelier`, by default
 * `~/.cache/atelier`. It holds what can be made again (the embedded database's data-directory
 * template, src/store/pglite-template.ts), never data.
 */
export function atelierCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(cache, 'atelier');
}
