import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The development switch for Client ID Metadata Documents on one machine: a CA whose
 * certificates make `https://localhost`, `https://127.0.0.1` and `https://[::1]` documents
 * acceptable (a client's document is otherwise fetched only from public addresses).
 */
export interface CimdDevCa {
  /** The file, as resolved: said in the start-up warning. */
  readonly path: string;
  /** Its PEM text, read once at start like every other setting. */
  readonly pem: string;
}

/** The values the switch depends on, as the schema parsed them. */
interface Values {
  readonly OAUTH_CIMD_DEV_CA?: string | undefined;
  readonly OAUTH_CIMD_HOSTS: string;
}

/**
 * Reads `OAUTH_CIMD_DEV_CA`, or null when it is not set. A switch that cannot work, or that
 * would open a production server to documents on its own machine, adds a problem instead
 * (listed with every other one, as config-file.ts does).
 */
export function readCimdDevCa(
  values: Values,
  production: boolean,
  cwd: string,
  problems: string[],
): CimdDevCa | null {
  const given = values.OAUTH_CIMD_DEV_CA;
  if (given === undefined) return null;
  const problem = (text: string) => {
    problems.push(`OAUTH_CIMD_DEV_CA: ${text}`);
    return null;
  };
  if (production) {
    return problem(
      'refused with NODE_ENV=production: it is a development switch that lets metadata documents come from this computer; unset it',
    );
  }
  // The switch adds this computer to `*` (any public host); a list admits only what it names.
  const hosts = values.OAUTH_CIMD_HOSTS.split(',');
  if (
    values.OAUTH_CIMD_HOSTS !== '*' &&
    !hosts.includes('localhost') &&
    !hosts.includes('127.0.0.1')
  ) {
    return problem(
      `has no effect: OAUTH_CIMD_HOSTS ${values.OAUTH_CIMD_HOSTS === '' ? 'is empty (CIMD off)' : 'lists neither localhost nor 127.0.0.1'}; set it to * or add them`,
    );
  }
  const file = path.resolve(cwd, given);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    return problem(`cannot read ${file}: ${(error as Error).message}`);
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    return problem(`${file} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  // A server's own certificate here (mkcert's localhost.pem for its rootCA.pem) would fail only
  // later, at each fetch, with a TLS error.
  if (!certificate.ca) {
    return problem(
      `${file} is not a CA certificate (basicConstraints CA:TRUE): give the CA that issued the document server's certificate (mkcert: rootCA.pem in \`mkcert -CAROOT\`)`,
    );
  }
  return { path: file, pem };
}
