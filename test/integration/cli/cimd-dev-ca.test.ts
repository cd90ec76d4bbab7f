import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { atelier, startServer } from '../../helpers/cli.ts';
import { migratedDataDir } from '../../helpers/data-dir.ts';
import { localCertificateAuthority } from '../../helpers/metadata-documents.ts';

// What an operator sees of the CIMD development switch: a loud warning while it is on, and no
// start at all in production.
describe('bin/atelier serve with OAUTH_CIMD_DEV_CA', () => {
  let ca: Awaited<ReturnType<typeof localCertificateAuthority>>;
  before(async () => {
    ca = await localCertificateAuthority();
  });
  after(() => ca.close());

  it('warns at start that documents are accepted from this computer', async (ctx) => {
    const dataDir = await migratedDataDir('atelier-dev-ca-');
    ctx.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServer({ DATA_DIR: dataDir, OAUTH_CIMD_DEV_CA: ca.caFile });
    try {
      assert.match(
        server.stderr(),
        /^WARNING: OAUTH_CIMD_DEV_CA is set: Client ID Metadata Documents are accepted from this computer .* with certificates from .*rootCA\.pem\. A development switch/m,
      );
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
    }
  });

  it('refuses to start with NODE_ENV=production, saying why, and creates nothing', async (ctx) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-dev-ca-'));
    ctx.after(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = path.join(dir, 'data');
    const result = await atelier(['serve'], {
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      OAUTH_CIMD_DEV_CA: ca.caFile,
    });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(
      result.stderr,
      'Invalid configuration:\n  - OAUTH_CIMD_DEV_CA: refused with NODE_ENV=production: it is a development switch that lets metadata documents come from this computer; unset it\n',
    );
    assert.equal(existsSync(dataDir), false, 'no data directory was created');
  });
});
