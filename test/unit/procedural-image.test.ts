import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { builtinElements } from '../../src/domain/builtin-catalogue.ts';
import type { ElementPicture } from '../../src/domain/element.ts';
import type { ImageSettings } from '../../src/domain/kinds/image.kind.ts';
import { proceduralImageEngine } from '../../src/engines/procedural-image/procedural-image.engine.ts';

const base: ImageSettings = {
  prompt: 'a red lighthouse by the ocean',
  negativePrompt: null,
  width: 256,
  height: 192,
  aspectRatio: '4:3',
  count: 1,
  seed: 1,
  format: 'png',
  elementIds: [],
};

async function render(
  settings: Partial<ImageSettings>,
  elements: readonly ElementPicture[] = [],
): Promise<Buffer[]> {
  const progress: number[] = [];
  const result = await proceduralImageEngine.run(
    { taskId: 't', kind: 'image', options: {}, elements, settings: { ...base, ...settings } },
    { signal: new AbortController().signal, reportProgress: (p) => progress.push(p) },
  );
  assert.ok(result.ok);
  assert.equal(progress.at(-1), 1);
  return result.outputs.map((o) => o.bytes);
}

/** Mean absolute difference of two images' pixels, 0..255. */
async function difference(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = await Promise.all([a, b].map((img) => sharp(img).removeAlpha().raw().toBuffer()));
  let sum = 0;
  for (let i = 0; i < x!.length; i++) sum += Math.abs(x![i]! - y![i]!);
  return sum / x!.length;
}

describe('the procedural image engine', () => {
  it('is deterministic for prompt and seed', async () => {
    const [a] = await render({});
    const [b] = await render({});
    assert.ok(a!.equals(b!));
  });

  it('gives visibly different images for different prompts and seeds', async () => {
    const [red] = await render({});
    const [green] = await render({ prompt: 'green forest at night' });
    const [reseeded] = await render({ seed: 2 });
    assert.ok((await difference(red!, green!)) > 20, 'different prompt');
    assert.ok((await difference(red!, reseeded!)) > 20, 'different seed');
  });

  it('honours size, count and format', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const images = await render({ format, count: 2 });
      assert.equal(images.length, 2);
      for (const image of images) {
        const meta = await sharp(image).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], [format, 256, 192]);
      }
    }
  });

  it('composites the pictures of elements', async () => {
    const sun = builtinElements.find((e) => e.elementId === 'elm_sun')!;
    const [plain] = await render({});
    const [withSun] = await render({}, [{ kind: sun.kind, picture: Buffer.from(sun.svg!) }]);
    assert.ok((await difference(plain!, withSun!)) > 1);
  });

  it('renders off the event loop: a 2048² pair leaves the loop responsive', async () => {
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    histogram.enable();
    const started = performance.now();
    await render({ width: 2048, height: 2048, count: 2 });
    const elapsed = performance.now() - started;
    histogram.disable();
    const worstMs = histogram.max / 1e6;
    // libvips rasterises and encodes on its own threads; only SVG text is built in JS.
    assert.ok(
      worstMs < Math.max(60, elapsed / 4),
      `the loop stalled ${worstMs.toFixed(0)} ms of ${elapsed.toFixed(0)} ms`,
    );
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await assert.rejects(
      proceduralImageEngine.run(
        { taskId: 't', kind: 'image', options: {}, elements: [], settings: base },
        { signal: controller.signal, reportProgress: () => {} },
      ),
      /cancelled/,
    );
  });
});
