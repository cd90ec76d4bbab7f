import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, TestClock } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { balances } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import {
  createUpload,
  download,
  gqlOk,
  testPicture,
  testTone,
  upload,
  uploadOk,
} from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

const createElement = `mutation E($input: CreateElementInput!) {
  createElement(input: $input) { elementId kind name description public previewMediaId }
}`;
const createAvatar = `mutation A($input: CreateAvatarInput!) {
  createAvatar(input: $input) { avatarId name portraitMediaId voiceModelId createdAt }
}`;

describeEachBackend('uploads, own elements and avatars', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {
      env: { WORKER_CONCURRENCY: '0', UPLOAD_MAX_BYTES: String(2 * 1024 * 1024) },
    });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  const mediaState = async (id: string) =>
    (await database.db.selectFrom('media').select('state').where('id', '=', id).executeTakeFirst())
      ?.state;

  it('an uploaded image is sniffed, measured and downloadable; the declared type is not trusted', async () => {
    const { apiKey } = await seedAccount(t.app);
    const jpeg = await testPicture(320, 200, 'jpeg');
    // Declared as PNG; the bytes are JPEG.
    const outcome = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: jpeg,
    });
    assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    assert.deepEqual(outcome.body.media, {
      mediaId: outcome.mediaId,
      kind: 'image',
      mimeType: 'image/jpeg',
      bytes: jpeg.length,
      width: 320,
      height: 200,
      durationMs: null,
    });
    assert.deepEqual(await download(t.url, apiKey, outcome.mediaId), jpeg);
    // A second PUT to the same URL changes nothing.
    const again = await fetch(outcome.uploadUrl, { method: 'PUT', body: new Uint8Array(jpeg) });
    assert.equal(again.status, 409);
  });

  it('an uploaded audio is probed for its duration', async () => {
    const { apiKey } = await seedAccount(t.app);
    const wav = await testTone(1);
    const outcome = await upload(t.url, apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: wav,
    });
    assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    assert.equal(outcome.body.media?.mimeType, 'audio/wav');
    assert.ok(Math.abs(Number(outcome.body.media?.durationMs) - 2000) < 50);
  });

  it('bad uploads get a clear error and leave nothing usable', async () => {
    const { apiKey } = await seedAccount(t.app);
    const text = Buffer.from('this is not a picture at all, just some text bytes');
    const wrongType = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: text,
    });
    assert.equal(wrongType.status, 422);
    assert.equal(wrongType.body.error?.code, '120001');
    assert.match(String(wrongType.body.error?.message), /not image/);
    assert.equal(await mediaState(wrongType.mediaId), 'pending');
    const res = await graphql(t.url, {
      query: 'query D($ids: [ID!]!) { getDownloadUrls(mediaIds: $ids) { url } }',
      variables: { ids: [wrongType.mediaId] },
      apiKey,
    });
    assert.deepEqual(errorCodes(res), ['140004']);

    // An image as audio, a truncated image, a tiny image, a length that is not the declared one.
    const png = await testPicture(64, 64);
    const asAudio = await upload(t.url, apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: png,
    });
    assert.equal(asAudio.status, 422);
    const truncated = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: png.subarray(0, Math.floor(png.length / 2)),
    });
    assert.equal(truncated.status, 422);
    assert.match(String(truncated.body.error?.message), /cannot be decoded/);
    const tiny = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(8, 8),
    });
    assert.equal(tiny.status, 422);
    const short = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: png,
      declaredBytes: png.length + 10,
    });
    assert.equal(short.status, 422);
    assert.match(String(short.body.error?.message), /declared/);
    for (const m of [asAudio, truncated, tiny, short])
      assert.equal(await mediaState(m.mediaId), 'pending');

    // A forged or altered signature is refused before anything is read.
    const forged = new URL(short.uploadUrl);
    forged.searchParams.set('sig', 'A'.repeat(43));
    assert.equal((await fetch(forged, { method: 'PUT', body: new Uint8Array(png) })).status, 403);
    // A download URL of the same media is not an upload URL, nor the reverse.
    const asDownload = short.uploadUrl.replace('/uploads/', '/media/');
    assert.equal((await fetch(asDownload)).status, 403);
  });

  it('two PUTs of one upload at once: one completes it, the other changes nothing', async () => {
    const { apiKey } = await seedAccount(t.app);
    const picture = await testPicture(200, 120);
    const created = await createUpload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: picture.length,
    });
    const statuses = await Promise.all(
      [1, 2, 3].map(
        async () =>
          (await fetch(created.uploadUrl, { method: 'PUT', body: new Uint8Array(picture) })).status,
      ),
    );
    assert.deepEqual(
      statuses.sort(),
      [200, 409, 409],
      'exactly one PUT completes the upload; the others are told it is complete',
    );
    assert.deepEqual(await download(t.url, apiKey, created.mediaId), picture);
  });

  it('uploads never completed are forgotten once their URL has expired', async (ctx) => {
    const clock = new TestClock();
    const node = await startTestApp(database, { clock, env: { WORKER_CONCURRENCY: '0' } });
    ctx.after(() => node.close());
    const { apiKey } = await seedAccount(node.app);
    const png = await testPicture(32, 32);
    const done = await uploadOk(node.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: png,
    });
    const refused = await upload(node.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: Buffer.from('not a picture'),
    });
    assert.equal(await mediaState(refused.mediaId), 'pending');
    clock.advance(15 * 60_000 + 10 * 60_000 + 1000); // past the URL and the grace for late PUTs
    const swept = await node.app.services.uploads.sweepExpired();
    assert.ok(swept.dropped >= 1, JSON.stringify(swept));
    assert.equal(await mediaState(refused.mediaId), undefined);
    assert.equal(await mediaState(done), 'ready', 'completed uploads stay');
  });

  it('createUpload refuses what cannot be taken, before any URL exists', async () => {
    const { apiKey } = await seedAccount(t.app);
    const ask = (input: Record<string, unknown>) =>
      graphql(t.url, {
        query: 'mutation U($input: CreateUploadInput!) { createUpload(input: $input) { mediaId } }',
        variables: { input },
        apiKey,
      });
    assert.deepEqual(
      errorCodes(await ask({ kind: 'image', mimeType: 'image/png', bytes: 3 * 1024 * 1024 })),
      ['120001'],
    );
    assert.deepEqual(errorCodes(await ask({ kind: 'image', mimeType: 'text/plain', bytes: 10 })), [
      '120001',
    ]);
    assert.deepEqual(errorCodes(await ask({ kind: 'video', mimeType: 'video/mp4', bytes: 10 })), [
      '120002',
    ]);
    assert.deepEqual(
      errorCodes(
        await graphql(t.url, {
          query:
            'mutation { createUpload(input: { kind: image, mimeType: "image/png", bytes: 10 }) { mediaId } }',
        }),
      ),
      ['100101'],
    );
    // A body above the configured limit is refused by the server, whatever was declared.
    const big = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: Buffer.alloc(2 * 1024 * 1024 + 1),
      declaredBytes: 1000,
    });
    assert.equal(big.status, 413);
  });

  it('own elements: made from an image of the account, listed with the library, deleted', async () => {
    const owner = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const mediaId = await uploadOk(t.url, owner.apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(),
    });
    const { createElement: element } = await gqlOk<{ createElement: Record<string, unknown> }>(
      t.url,
      owner.apiKey,
      createElement,
      { input: { kind: 'character', name: ' Pip ', description: 'A red ball', mediaId } },
    );
    assert.deepEqual(
      { ...element, elementId: undefined },
      {
        elementId: undefined,
        kind: 'character',
        name: 'Pip',
        description: 'A red ball',
        public: false,
        previewMediaId: mediaId,
      },
    );
    const list = (apiKey?: string) =>
      graphql<{ listElements: { nodes: { elementId: string; public: boolean }[] } }>(t.url, {
        query: '{ listElements(first: 100) { nodes { elementId public } } }',
        ...(apiKey === undefined ? {} : { apiKey }),
      });
    const ownList = (await list(owner.apiKey)).body.data!.listElements.nodes;
    assert.ok(ownList.some((e) => e.elementId === element.elementId && !e.public));
    assert.ok(ownList.some((e) => e.public));
    // Others (and anonymous callers) see the library only.
    for (const nodes of [
      (await list(other.apiKey)).body.data!.listElements.nodes,
      (await list()).body.data!.listElements.nodes,
    ]) {
      assert.ok(nodes.every((e) => e.public));
    }
    const get = (apiKey: string) =>
      graphql(t.url, {
        query: 'query G($id: ID!) { getElement(elementId: $id) { name } }',
        variables: { id: element.elementId },
        apiKey,
      });
    assert.deepEqual(errorCodes(await get(other.apiKey)), ['140004']);

    // Another account cannot make an element of this media, nor delete this element.
    const stolen = await graphql(t.url, {
      query: createElement,
      variables: { input: { kind: 'object', name: 'mine', mediaId } },
      apiKey: other.apiKey,
    });
    assert.deepEqual(errorCodes(stolen), ['140004']);
    const del = (apiKey: string, id: string) =>
      graphql<{ deleteElement: boolean }>(t.url, {
        query: 'mutation D($id: ID!) { deleteElement(elementId: $id) }',
        variables: { id },
        apiKey,
      });
    assert.deepEqual(errorCodes(await del(other.apiKey, String(element.elementId))), ['140004']);
    assert.deepEqual(errorCodes(await del(owner.apiKey, 'elm_sun')), ['110202']);
    assert.equal(
      (await del(owner.apiKey, String(element.elementId))).body.data?.deleteElement,
      true,
    );
    assert.deepEqual(errorCodes(await get(owner.apiKey)), ['140004']);
    assert.deepEqual(errorCodes(await del(owner.apiKey, String(element.elementId))), ['140004']);
  });

  it('an element of an audio, or of an unfinished upload, is refused', async () => {
    const { apiKey } = await seedAccount(t.app);
    const audio = await uploadOk(t.url, apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: await testTone(0.5),
    });
    const res = await graphql(t.url, {
      query: createElement,
      variables: { input: { kind: 'object', name: 'noise', mediaId: audio } },
      apiKey,
    });
    assert.deepEqual(errorCodes(res), ['120001']);
    const pending = await upload(t.url, apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: Buffer.from('nope, not an image'),
    });
    const res2 = await graphql(t.url, {
      query: createElement,
      variables: { input: { kind: 'object', name: 'x', mediaId: pending.mediaId } },
      apiKey,
    });
    assert.deepEqual(errorCodes(res2), ['140004']);
  });

  it('avatars: created from a portrait with a voice, listed, read, deleted; per account', async () => {
    const owner = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const portrait = await uploadOk(t.url, owner.apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(),
    });
    const made: { avatarId: string; voiceModelId: string | null }[] = [];
    for (const name of ['Ada', 'Bo', 'Cy']) {
      made.push(
        (
          await gqlOk<{ createAvatar: { avatarId: string; voiceModelId: string | null } }>(
            t.url,
            owner.apiKey,
            createAvatar,
            { input: { name, portraitMediaId: portrait, voiceModelId: 'voc_en-gb' } },
          )
        ).createAvatar,
      );
    }
    assert.equal(made[0]!.voiceModelId, 'voc_en-gb');
    const page1 = await gqlOk<{
      listAvatars: {
        nodes: { name: string }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    }>(
      t.url,
      owner.apiKey,
      '{ listAvatars(first: 2) { nodes { name } pageInfo { hasNextPage endCursor } } }',
    );
    assert.deepEqual(
      page1.listAvatars.nodes.map((a) => a.name),
      ['Cy', 'Bo'],
    );
    assert.equal(page1.listAvatars.pageInfo.hasNextPage, true, 'a third avatar follows');
    const page2 = await gqlOk<{
      listAvatars: { nodes: { name: string }[]; pageInfo: { hasNextPage: boolean } };
    }>(
      t.url,
      owner.apiKey,
      'query P($after: String) { listAvatars(first: 2, after: $after) { nodes { name } pageInfo { hasNextPage } } }',
      { after: page1.listAvatars.pageInfo.endCursor },
    );
    assert.deepEqual(
      page2.listAvatars.nodes.map((a) => a.name),
      ['Ada'],
    );
    assert.equal(page2.listAvatars.pageInfo.hasNextPage, false);

    const otherList = await gqlOk<{ listAvatars: { nodes: unknown[] } }>(
      t.url,
      other.apiKey,
      '{ listAvatars { nodes { name } } }',
    );
    assert.deepEqual(otherList.listAvatars.nodes, []);
    const getAvatar = (apiKey: string) =>
      graphql(t.url, {
        query: 'query G($id: ID!) { getAvatar(avatarId: $id) { name } }',
        variables: { id: made[0]!.avatarId },
        apiKey,
      });
    assert.deepEqual(errorCodes(await getAvatar(other.apiKey)), ['140004']);
    assert.deepEqual(
      errorCodes(
        await graphql(t.url, {
          query: 'mutation D($id: ID!) { deleteAvatar(avatarId: $id) }',
          variables: { id: made[0]!.avatarId },
          apiKey: other.apiKey,
        }),
      ),
      ['140004'],
    );
    const deleted = await gqlOk<{ deleteAvatar: boolean }>(
      t.url,
      owner.apiKey,
      'mutation D($id: ID!) { deleteAvatar(avatarId: $id) }',
      { id: made[0]!.avatarId },
    );
    assert.equal(deleted.deleteAvatar, true);
    assert.deepEqual(errorCodes(await getAvatar(owner.apiKey)), ['140004']);
  });

  it('an avatar needs a portrait image of the account and a known voice', async () => {
    const owner = await seedAccount(t.app);
    const other = await seedAccount(t.app);
    const audio = await uploadOk(t.url, owner.apiKey, {
      kind: 'audio',
      mimeType: 'audio/wav',
      bytes: await testTone(0.5),
    });
    const portrait = await uploadOk(t.url, owner.apiKey, {
      kind: 'image',
      mimeType: 'image/png',
      bytes: await testPicture(),
    });
    const attempt = (apiKey: string, input: Record<string, unknown>) =>
      graphql(t.url, { query: createAvatar, variables: { input }, apiKey });
    assert.deepEqual(
      errorCodes(await attempt(owner.apiKey, { name: 'x', portraitMediaId: audio })),
      ['120001'],
    );
    assert.deepEqual(
      errorCodes(await attempt(other.apiKey, { name: 'x', portraitMediaId: portrait })),
      ['140004'],
    );
    assert.deepEqual(
      errorCodes(
        await attempt(owner.apiKey, {
          name: 'x',
          portraitMediaId: portrait,
          voiceModelId: 'voc_klingon',
        }),
      ),
      ['140004'],
    );
    assert.deepEqual(
      errorCodes(await attempt(owner.apiKey, { name: '  ', portraitMediaId: portrait })),
      ['120001'],
    );
    const count = await database.db.selectFrom('avatars').select('id').execute();
    assert.ok(count.every((a) => a.id.startsWith('ava_')));
    assert.deepEqual(await balances(t.url, owner.apiKey), { standard: 100 });
  });

  it('voices: listed from eSpeak NG, filtered by language, with a free preview', async () => {
    const { apiKey } = await seedAccount(t.app);
    type Voices = {
      listVoiceModels: {
        nodes: {
          voiceModelId: string;
          name: string;
          language: string;
          variant: string | null;
          gender: string | null;
          previewMediaId: string;
        }[];
        pageInfo: { hasNextPage: boolean };
      };
    };
    const all = await gqlOk<Voices>(
      t.url,
      apiKey,
      '{ listVoiceModels(first: 100) { nodes { voiceModelId name language previewMediaId } pageInfo { hasNextPage } } }',
    );
    assert.equal(all.listVoiceModels.nodes.length, 100);
    assert.equal(all.listVoiceModels.pageInfo.hasNextPage, true);
    // Public: no credential needed.
    const english = await graphql<Voices>(t.url, {
      query:
        '{ listVoiceModels(language: "EN") { nodes { voiceModelId name language variant gender previewMediaId } } }',
    });
    const nodes = english.body.data!.listVoiceModels.nodes;
    assert.ok(nodes.length >= 3, JSON.stringify(nodes));
    assert.ok(nodes.every((v) => v.language === 'en' || v.language.startsWith('en-')));
    const gb = nodes.find((v) => v.voiceModelId === 'voc_en-gb');
    assert.ok(gb !== undefined && /English/.test(gb.name) && gb.variant === null);
    // Each language also has a female variant.
    const gbFemale = nodes.find((v) => v.voiceModelId === 'voc_en-gb-female');
    assert.deepEqual([gbFemale?.variant, gbFemale?.gender], ['female', 'female']);
    assert.deepEqual(
      errorCodes(
        await graphql(t.url, { query: '{ listVoiceModels(language: "e n") { nodes { name } } }' }),
      ),
      ['120001'],
    );

    const before = await balances(t.url, apiKey);
    const preview = await download(t.url, apiKey, gb.previewMediaId);
    assert.equal(
      preview.subarray(0, 3).toString('latin1') === 'ID3' ||
        (preview[0] === 0xff && (preview[1]! & 0xe0) === 0xe0),
      true,
    );
    assert.deepEqual(await balances(t.url, apiKey), before);
  });
});
