import { execFileSync } from 'node:child_process';

/**
 * A Node older than Atelier needs (the system's, say) with its version, to run commands as a
 * person with only that Node would; undefined when this machine has none.
 */
export function olderNode(): { path: string; version: string } | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const version = execFileSync(candidate, ['-p', 'process.versions.node'], {
        encoding: 'utf8',
      }).trim();
      const [major, minor] = version.split('.').map(Number) as [number, number];
      if (major < 22 || (major === 22 && minor < 18)) return { path: candidate, version };
    } catch {
      // not there
    }
  }
  return undefined;
}
