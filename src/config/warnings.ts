import type { Config } from './config.ts';

const loopbackHosts = new Set(['127.0.0.1', '::1', 'localhost']);

/** Unsafe development defaults in force, to be said loudly at start (DESIGN.md). */
export function unsafeDefaults(config: Config): string[] {
  const warnings: string[] = [];
  const exposed = !loopbackHosts.has(config.host);
  if (exposed && config.publicUrl.startsWith('http:')) {
    warnings.push(
      `HOST=${config.host} exposes the server but PUBLIC_URL is plain http: put it behind TLS and set an https PUBLIC_URL.`,
    );
  }
  if (exposed && config.metrics.token === null && config.metrics.port === null) {
    warnings.push(
      `HOST=${config.host} serves /metrics to anyone who reaches it: set METRICS_TOKEN or METRICS_PORT.`,
    );
  }
  if (exposed && config.databaseUrl === undefined) {
    warnings.push(
      'The embedded database (PGlite) is for one process on one machine; set DATABASE_URL for a deployment.',
    );
  }
  const devCa = config.oauth.cimdDevCa;
  if (devCa !== null) {
    warnings.push(
      `OAUTH_CIMD_DEV_CA is set: Client ID Metadata Documents are accepted from this computer (localhost, 127.0.0.1, [::1]) with certificates from ${devCa.path}. A development switch: unset it anywhere else.`,
    );
  }
  if (config.webhooks.allowLocalhost) {
    warnings.push(
      'WEBHOOK_ALLOW_LOCALHOST is true: webhook endpoints on this computer (localhost, 127.0.0.1, [::1]) are accepted. A development switch: unset it anywhere else.',
    );
  }
  return warnings;
}
