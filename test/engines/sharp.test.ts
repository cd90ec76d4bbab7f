import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { closeSharp, ImageError, sharp } from '../../src/shared/sharp.ts';

after(() => closeSharp());

/** A `width`×`height` PNG of one colour (#c96), encoded by the worker from raw pixels. */
function png(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) pixels.set([0xcc, 0x99, 0x66], i);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

describe('sharp in a worker process', () => {
  it('runs a pipeline from its bytes through its steps to its answer', async () => {
    const { data, info } = await sharp(await png(64, 32))
      .resize(16, 16, { fit: 'cover' })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.ok(Buffer.isBuffer(data));
    assert.deepEqual([info.width, info.height, info.channels], [16, 16, 3]);
    assert.equal(data.length, 16 * 16 * 3);
    assert.deepEqual([...data.subarray(0, 3)], [0xcc, 0x99, 0x66], 'the colour survived');
  });

  it('leaves a pipeline as it was when a step is added to it', async () => {
    const original = sharp(await png(40, 20));
    const smaller = original.resize(10, 5);
    const [big, small] = await Promise.all([original.metadata(), smaller.metadata()]);
    assert.deepEqual([big.width, big.height], [40, 20]);
    // metadata() reads the input; the resized pipeline's output says what resize did.
    const { info } = await smaller.png().toBuffer({ resolveWithObject: true });
    assert.deepEqual([small.width, info.width, info.height], [40, 10, 5]);
  });

  it("rejects with sharp's own message for bytes it cannot read, and goes on", async () => {
    await assert.rejects(
      sharp(Buffer.from('not an image at all'), { failOn: 'error' }).metadata(),
      /unsupported image format/,
    );
    // A failed pipeline is an answer, not a crash: the next one runs.
    assert.equal((await sharp(await png(16, 16)).metadata()).channels, 3);
  });

  it("tells sharp's refusal of an image (ImageError) from the worker failing", async () => {
    await assert.rejects(sharp(Buffer.from('not an image')).metadata(), ImageError);
    // Sent to the worker, then the worker closed under it: rejected, but not as the image's fault.
    const cutShort = assert.rejects(
      sharp(await png(64, 64))
        .raw()
        .toBuffer(),
      (error) => error instanceof Error && !(error instanceof ImageError),
    );
    await closeSharp();
    await cutShort;
    assert.equal((await sharp(await png(16, 16)).metadata()).width, 16, 'a new worker after');
  });

  it('never loads libvips into the process that asks', {
    skip: process.platform !== 'linux',
  }, async () => {
    await png(16, 16);
    assert.doesNotMatch(readFileSync('/proc/self/maps', 'utf8'), /libvips/);
  });
});
