import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinModels } from '../../src/domain/builtin-catalogue.ts';
import { fixedDebit, planDebit } from '../../src/domain/credits.ts';
import { validateImage } from '../../src/domain/kinds/image.kind.ts';
import type { ImageModel } from '../../src/domain/model.ts';
import { priceOfSettings } from '../helpers/kinds.ts';

const sketch = builtinModels.find((m) => m.modelId === 'mdl_atelier-sketch') as ImageModel;
const seed = () => 7;

describe('image settings against a model’s capabilities', () => {
  it('fills in defaults: the first size, the first format, one image, a chosen seed', () => {
    const result = validateImage(sketch, { prompt: ' hello ' }, seed);
    assert.ok(result.ok);
    assert.deepEqual(result.settings, {
      prompt: 'hello',
      negativePrompt: null,
      width: 1024,
      height: 1024,
      aspectRatio: '1:1',
      count: 1,
      seed: 7,
      format: 'png',
      elementIds: [],
    });
  });

  it('an aspect ratio alone picks that ratio’s size', () => {
    const result = validateImage(sketch, { prompt: 'x', aspectRatio: '9:16' }, seed);
    assert.ok(result.ok);
    assert.deepEqual([result.settings.width, result.settings.height], [576, 1024]);
  });

  it('reports every problem, each with its code', () => {
    const result = validateImage(
      sketch,
      {
        prompt: 5,
        width: 1024,
        count: 'two',
        format: 'bmp',
        elementIds: ['a', 'b', 'c', 'd', 'e'],
      },
      seed,
    );
    assert.ok(!result.ok);
    assert.deepEqual(
      result.problems.map((p) => `${p.field} ${p.code}`),
      ['prompt 120001', 'count 120001', 'height 120002', 'format 120002', 'elementIds 120002'],
    );
  });

  it('duplicated element IDs count once', () => {
    const result = validateImage(sketch, { prompt: 'x', elementIds: ['elm_sun', 'elm_sun'] }, seed);
    assert.ok(result.ok);
    assert.deepEqual(result.settings.elementIds, ['elm_sun']);
  });

  it('prices per image', async () => {
    const result = validateImage(sketch, { prompt: 'x', width: 512, height: 512, count: 3 }, seed);
    assert.ok(result.ok);
    assert.equal(await priceOfSettings(sketch, result.settings), 3);
  });
});

describe('planning a debit across categories', () => {
  const balances = new Map([
    ['promo', 2],
    ['standard', 5],
  ]);

  it('drains categories in the configured order', () => {
    assert.deepEqual(planDebit(balances, 4, ['promo', 'standard'], null), {
      ok: true,
      parts: [
        { category: 'promo', amount: 2 },
        { category: 'standard', amount: 2 },
      ],
    });
  });

  it('a model’s own category is the only one it draws from', () => {
    assert.deepEqual(planDebit(balances, 3, ['promo', 'standard'], 'promo'), {
      ok: false,
      available: 2,
    });
    assert.deepEqual(planDebit(balances, 5, ['promo'], 'standard'), {
      ok: true,
      parts: [{ category: 'standard', amount: 5 }],
    });
  });

  it('says what is available when it cannot be covered', () => {
    assert.deepEqual(planDebit(balances, 8, ['promo', 'standard'], null), {
      ok: false,
      available: 7,
    });
    assert.deepEqual(planDebit(new Map(), 1, ['standard'], null), { ok: false, available: 0 });
  });
});

describe('a debit fixed before the balances are read', () => {
  it('is the plan any balance that covers it gets, when one category pays', () => {
    const covering = new Map([
      ['promo', 9],
      ['standard', 9],
    ]);
    for (const [order, category] of [
      [['standard'], null],
      [['promo', 'standard'], 'standard'],
    ] as const) {
      const fixed = fixedDebit(4, order, category);
      assert.deepEqual(fixed, [{ category: 'standard', amount: 4 }]);
      assert.deepEqual(planDebit(covering, 4, order, category), { ok: true, parts: fixed });
    }
  });

  it('is nothing for a free model, whatever the order', () => {
    assert.deepEqual(fixedDebit(0, ['promo', 'standard'], null), []);
  });

  it('is not fixed when the balances decide the split', () => {
    assert.equal(fixedDebit(4, ['promo', 'standard'], null), undefined);
    assert.equal(fixedDebit(-1, ['standard'], null), undefined, 'no price is negative');
  });
});
