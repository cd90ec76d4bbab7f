import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import { type Inspected, inspectUpload } from '../../src/services/upload-checks.ts';
import { closeSharp, sharp } from '../../src/shared/sharp.ts';
import { testPicture } from '../helpers/media.ts';

after(() => closeSharp());

const deps = {
  probe: {
    audioDurationMs: () => Promise.reject(new Error('no audio in these tests')),
  },
  limits: { maxImagePixels: 1024, maxAudioSeconds: 60 },
};

/** The same 200×200 picture in each image format an upload may be, plain and interlaced. */
async function encodings() {
  const png = await testPicture(200, 200);
  const encode = (to: (image: ReturnType<typeof sharp>) => ReturnType<typeof sharp>) =>
    to(sharp(png)).toBuffer();
  return {
    png,
    'interlaced png': await encode((i) => i.png({ progressive: true })),
    jpeg: await encode((i) => i.jpeg()),
    'progressive jpeg': await encode((i) => i.jpeg({ progressive: true })),
    webp: await encode((i) => i.webp()),
    gif: await encode((i) => i.toFormat('gif')),
  };
}

const cut = (bytes: Buffer, fraction: number) =>
  bytes.subarray(0, Math.floor(bytes.length * fraction));

function refusal(found: Inspected | { readonly refused: string }): string | undefined {
  return 'refused' in found ? found.refused : undefined;
}

describe('an uploaded image is decoded whole before it is accepted', () => {
  it('accepts each format whole and refuses it cut short, interlaced ones included', async () => {
    for (const [format, bytes] of Object.entries(await encodings())) {
      const whole = await inspectUpload('image', bytes, deps);
      assert.ok(!('refused' in whole), `${format} whole: ${refusal(whole)}`);
      assert.deepEqual([whole.width, whole.height], [200, 200]);
      for (const fraction of [0.5, 0.9]) {
        const found = await inspectUpload('image', cut(bytes, fraction), deps);
        assert.equal(refusal(found), 'the image cannot be decoded', `${format} cut at ${fraction}`);
      }
    }
  });

  it('refuses every cut-short image while others are decoded at the same time', async () => {
    // sharp's stats() lost a truncated PNG's or JPEG's error about one time in three when
    // other images were being decoded beside it: the check must not depend on running alone.
    const { png, jpeg } = await encodings();
    for (let round = 0; round < 12; round++) {
      const checks = [png, jpeg].flatMap((bytes) => [
        inspectUpload('image', bytes, deps).then(refusal),
        inspectUpload('image', cut(bytes, 0.5), deps).then(refusal),
        inspectUpload('image', cut(bytes, 0.5), deps).then(refusal),
      ]);
      assert.deepEqual(await Promise.all(checks), [
        ...[undefined, 'the image cannot be decoded', 'the image cannot be decoded'],
        ...[undefined, 'the image cannot be decoded', 'the image cannot be decoded'],
      ]);
    }
  });

  it('refuses a PNG cut before its IEND chunk and an animated GIF cut after its first frame', async () => {
    // Both decode without an error (what libvips needs is all there): their ends are checked.
    const png = await testPicture(200, 200);
    const withoutEnd = png.subarray(0, png.length - 12);
    assert.equal(
      refusal(await inspectUpload('image', withoutEnd, deps)),
      'the image cannot be decoded',
    );
    const gif = await animatedGif(64, 48, 3);
    const whole = await inspectUpload('image', gif, deps);
    assert.ok(!('refused' in whole), refusal(whole));
    assert.deepEqual([whole.mimeType, whole.width, whole.height], ['image/gif', 64, 48]);
    for (const fraction of [0.5, 0.9]) {
      const found = await inspectUpload('image', cut(gif, fraction), deps);
      assert.equal(refusal(found), 'the image cannot be decoded', `cut at ${fraction}`);
    }
  });

  it('refuses an image outside the size limits by its size, before decoding it', async () => {
    // Over the decode's pixel limit (1024²) too: decoded first, it would "not decode".
    const tooBig = await testPicture(1100, 1000);
    assert.equal(
      refusal(await inspectUpload('image', tooBig, deps)),
      'the image is 1100x1000; each side must be from 16 to 1024 pixels',
    );
    // A header over sharp's own default limit (16383² pixels) is read all the same.
    assert.equal(
      refusal(await inspectUpload('image', pngHeader(16_384, 16_384), deps)),
      'the image is 16384x16384; each side must be from 16 to 1024 pixels',
    );
    assert.match(refusal(await inspectUpload('image', await testPicture(8, 8), deps)) ?? '', /8x8/);
  });
});

/** A GIF of `frames` frames of `width`×`height`, each a different pattern. */
function animatedGif(width: number, height: number, frames: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * frames * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7 + Math.floor(i / 97)) & 0xff;
  return sharp(pixels, { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .toFormat('gif')
    .toBuffer();
}

/** A PNG that says it is `width`×`height` (8-bit RGB) and holds the first row of it only. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const framed = Buffer.alloc(typed.length + 8);
    framed.writeUInt32BE(data.length, 0);
    typed.copy(framed, 4);
    framed.writeUInt32BE(crc32(typed), typed.length + 4);
    return framed;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const firstRow = deflateSync(Buffer.alloc(1 + 3 * width)); // its filter byte, black pixels
  return Buffer.concat([
    signature,
    chunk('IHDR', ihdr),
    chunk('IDAT', firstRow),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
