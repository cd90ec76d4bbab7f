import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import {
  authorizeInBrowser,
  authorizeUrl,
  codeExchangeFields,
  newPkce,
  TestBrowser,
  tokenRequest,
} from '../../helpers/oauth-flow.ts';
import { seedAccount } from '../../helpers/seed.ts';

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost:45999/oauth/callback';

// Issue 16: time comes from the clock port. An app whose clock is years away from the wall
// clock (as every test clock is) must agree with itself: a code, an ID token or an access
// token written on one clock and checked on another would be born expired.
describeEachBackend('the authorization server keeps time on the clock port', (backend) => {
  let database: Database;
  let t: TestApp;
  const clock = new TestClock();
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, { clock });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('with the clock ahead, a fresh code is exchanged and its token opens /mcp', async () => {
    const { account } = await seedAccount(t.app);
    const token = await mcpAccessToken(t, account.id);
    const res = await postMcp(t.url, { authorization: `Bearer ${token}` });
    assert.equal(res.status, 200);
  });

  it('a code lives one minute of the clock: moved past it, the exchange is invalid_grant', async () => {
    const { account } = await seedAccount(t.app);
    const who = { email: `clock-${account.id}@example.test`, password: 'a clock password' };
    await t.app.services.identityProvider!.addUser({ accountId: account.id, ...who });
    const pkce = await newPkce();
    const url = authorizeUrl(t.url, { clientId, redirectUri, pkce });
    const callback = await authorizeInBrowser(new TestBrowser(t.url), t.url, url, who);
    clock.advance(61_000);
    const refused = await tokenRequest(
      t.url,
      codeExchangeFields(t.url, clientId, redirectUri, callback, pkce),
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'invalid_grant');
  });

  // Runs last: it moves the clock a week on. A token's signature is checked once and then
  // remembered; its expiry must still be read from the clock on every request.
  it('an access token that opened /mcp is refused once the clock passes its expiry', async () => {
    const { account } = await seedAccount(t.app);
    const token = await mcpAccessToken(t, account.id);
    assert.equal((await postMcp(t.url, { authorization: `Bearer ${token}` })).status, 200);
    clock.advance(7 * 86_400_000 - 60_000);
    assert.equal((await postMcp(t.url, { authorization: `Bearer ${token}` })).status, 200);
    clock.advance(2 * 60_000);
    const expired = await postMcp(t.url, { authorization: `Bearer ${token}` });
    assert.equal(expired.status, 401);
    assert.match(expired.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });
});
