import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { ModelDefinition } from '../../../src/domain/model.ts';
import { recordCatalogue, recordedCatalogue } from '../../../src/store/catalogue.store.ts';
import type { Database } from '../../../src/store/database.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';

// The catalogue the fleet last put in use: each start records it, and its time says when it
// last changed, not when a node last started with the same models.

const changedAt = async (database: Database) =>
  (
    await database.db.selectFrom('model_catalogue').select('changed_at').executeTakeFirstOrThrow()
  ).changed_at.toISOString();

describeEachBackend('the recorded model catalogue', (backend) => {
  let database: Database;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(() => database.close());

  it('is rewritten when the models change, and left as it was when they do not', async () => {
    const one = [{ modelId: 'mdl_one' }] as unknown as ModelDefinition[];
    const two = [{ modelId: 'mdl_one' }, { modelId: 'mdl_two' }] as unknown as ModelDefinition[];
    await recordCatalogue(database.db, one, new Date('2011-03-14T12:00:00Z'));
    await recordCatalogue(database.db, one, new Date('2011-03-15T12:00:00Z'));
    assert.deepEqual(await recordedCatalogue(database.db), one);
    assert.equal(
      await changedAt(database),
      '2011-03-14T12:00:00.000Z',
      'a restart changes nothing',
    );

    await recordCatalogue(database.db, two, new Date('2011-03-16T12:00:00Z'));
    assert.deepEqual(await recordedCatalogue(database.db), two);
    assert.equal(await changedAt(database), '2011-03-16T12:00:00.000Z');
  });
});
