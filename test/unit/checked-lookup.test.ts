import assert from 'node:assert/strict';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { describe, it } from 'node:test';
import { checkedLookup } from '../../src/shared/public-fetch.ts';

/** Calls a lookup as net does and gives back what it answered. */
function ask(
  answers: LookupAddress[],
  options: LookupOptions,
): Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }> {
  const lookup = checkedLookup({ resolveHost: async () => answers });
  return new Promise((resolve) =>
    lookup('agent.example', options, (error, address, family) =>
      resolve({ error, address, family }),
    ),
  );
}

const v4 = { address: '93.184.215.14', family: 4 };
const v6 = { address: '2606:4700:4700::1111', family: 6 };

describe('checkedLookup (the CIMD socket lookup)', () => {
  it('answers every address when net asks for all, one when it does not', async () => {
    assert.deepEqual(await ask([v6, v4], { all: true }), {
      error: null,
      address: [v6, v4],
      family: undefined,
    });
    assert.deepEqual(await ask([v6, v4], {}), { error: null, address: v6.address, family: 6 });
  });

  it('keeps to the family net asks for', async () => {
    assert.deepEqual((await ask([v6, v4], { all: true, family: 4 })).address, [v4]);
    assert.deepEqual((await ask([v6, v4], { family: 'IPv6' })).address, v6.address);
    const { error } = await ask([v4], { family: 6 });
    assert.match(String(error), /agent\.example has no public address/);
    assert.equal((error as { detail?: string }).detail, 'agent.example has no IPv6 address');
  });

  it('refuses the name when any answer is not public, whatever family was asked', async () => {
    for (const bad of [
      { address: '10.0.0.1', family: 4 },
      { address: '::ffff:a00:1', family: 6 },
      { address: '64:ff9b::a00:1', family: 6 },
    ]) {
      const { error } = await ask([v4, bad], { all: true, family: 4 });
      // One message whatever the reason (it is shown to whoever named the host); the log's
      // detail says which address and range.
      assert.match(String(error), /agent\.example has no public address$/, bad.address);
      assert.match(
        (error as { detail?: string }).detail ?? '',
        new RegExp(`resolves to a private address \\(${bad.address.replaceAll('.', '\\.')}: `),
      );
    }
  });
});
