import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 30 §3: a delivery's error in the account's delivery log said whether the endpoint's
// host resolves to a private address or does not resolve at all, mapping this server's network
// for whoever owns the endpoint. One wording for both now; the reason is in the log.

const dns: Record<string, string> = { 'inside.hooks.example': '10.20.30.40' };

describeEachBackend('webhook deliveries to a host with no public address (issue 30)', (backend) => {
  let t: TestApp;
  withTestApp(
    backend,
    {
      env: { MODELS: testModels },
      webhookNetwork: {
        resolveHost: async (hostname) => {
          const address = dns[hostname];
          if (address === undefined) {
            throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
              code: 'ENOTFOUND',
            });
          }
          return [{ address, family: 4 }];
        },
      },
    },
    (started) => {
      ({ t } = started);
    },
  );

  it('a private address and an unknown name read the same; the log says which', async () => {
    const owner = await seedAccount(t.app);
    const errors: string[] = [];
    for (const host of ['inside.hooks.example', 'nowhere.hooks.example']) {
      const made = await graphql<{ createWebhookEndpoint: { endpoint: { id: string } } }>(t.url, {
        query: `mutation C($url: String!) { createWebhookEndpoint(input: { url: $url, events: [task_finished] }) { endpoint { id } } }`,
        variables: { url: `https://${host}/hook` },
        apiKey: owner.apiKey,
      });
      assert.deepEqual(errorCodes(made), [], JSON.stringify(made.body.errors));
      const endpointId = made.body.data!.createWebhookEndpoint.endpoint.id;
      await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: host });
      const failed = await t.logged(
        (e) => e.msg === 'webhook delivery failed' && e.endpointId === endpointId,
      );
      assert.match(
        String(failed.why),
        host.startsWith('inside')
          ? /inside\.hooks\.example resolves to a private address \(10\.20\.30\.40: private\)/
          : /nowhere\.hooks\.example does not resolve \(ENOTFOUND\)/,
      );
      const log = await graphql<{
        listWebhookDeliveries: {
          attempts: { error: string | null; statusCode: number | null }[];
        }[];
      }>(t.url, {
        query:
          'query D($id: ID!) { listWebhookDeliveries(endpointId: $id) { attempts { error statusCode } } }',
        variables: { id: endpointId },
        apiKey: owner.apiKey,
      });
      const [attempt] = log.body.data!.listWebhookDeliveries[0]!.attempts;
      assert.equal(attempt!.statusCode, null);
      errors.push(attempt!.error!.replace(host, 'HOST'));
    }
    assert.deepEqual(errors, ['HOST has no public address', 'HOST has no public address']);
  });
});
