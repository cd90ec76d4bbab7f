import type { OverlayOptions } from 'sharp';
import type { ImageSettings } from '../../domain/kinds/image.kind.ts';
import { type ImagePipeline, sharp } from '../../shared/sharp.ts';
import type { EngineRequest } from '../engine.ts';
import { paletteOf, seededRandom } from './palette.ts';

/** Renders image `index` of a request; the same request and index always give the same pixels. */
export async function renderImage(
  request: Extract<EngineRequest, { kind: 'image' }>,
  index: number,
): Promise<Buffer> {
  const { settings } = request;
  const detail = typeof request.options.detail === 'number' ? request.options.detail : 1;
  const random = seededRandom(settings.prompt, settings.negativePrompt ?? '', settings.seed, index);
  const hues = paletteOf(settings.prompt);

  const layers: OverlayOptions[] = [];
  for (const element of request.elements.filter((e) => e.kind === 'scene')) {
    const scene = await sharp(element.picture)
      .resize(settings.width, settings.height, { fit: 'cover' })
      .png()
      .toBuffer();
    layers.push({ input: scene, blend: 'multiply' });
  }
  layers.push({ input: Buffer.from(shapesSvg(settings, hues, random, detail)) });
  for (const element of request.elements.filter(
    (e) => e.kind === 'character' || e.kind === 'object',
  )) {
    const side = Math.round(Math.min(settings.width, settings.height) * (0.22 + random() * 0.16));
    const sprite = await sharp(element.picture)
      .resize(side, side, { fit: 'contain', background: '#0000' })
      .png()
      .toBuffer();
    layers.push({
      input: sprite,
      left: Math.round(random() * (settings.width - side)),
      top: Math.round(random() * (settings.height - side)),
    });
  }

  let image = sharp(Buffer.from(backgroundSvg(settings, hues, random))).composite(layers);
  if (request.elements.some((e) => e.kind === 'style')) {
    // Style elements wash the picture out: softer edges, paler colours.
    image = sharp(await image.png().toBuffer())
      .blur(1.5 + random() * 2)
      .modulate({ saturation: 0.65, brightness: 1.06 });
  }
  return encode(image, settings);
}

function encode(image: ImagePipeline, settings: ImageSettings): Promise<Buffer> {
  switch (settings.format) {
    case 'png':
      return image.png().toBuffer();
    case 'jpeg':
      return image.flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
    case 'webp':
      return image.webp({ quality: 90 }).toBuffer();
  }
}

function hsl(hue: number, saturation: number, lightness: number, alpha = 1): string {
  return `hsla(${Math.round(hue) % 360},${Math.round(saturation)}%,${Math.round(lightness)}%,${alpha.toFixed(2)})`;
}

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

function backgroundSvg(s: ImageSettings, hues: readonly number[], random: () => number): string {
  const from = hsl(pick(hues, random), 55 + random() * 30, 18 + random() * 25);
  const to = hsl(pick(hues, random) + 40 * random(), 60 + random() * 30, 55 + random() * 30);
  const angle = Math.round(random() * 360);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${s.width}" height="${s.height}">
<defs><linearGradient id="g" gradientTransform="rotate(${angle} .5 .5)"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>
<rect width="100%" height="100%" fill="url(#g)"/></svg>`;
}

function shapesSvg(
  s: ImageSettings,
  hues: readonly number[],
  random: () => number,
  detail: number,
): string {
  const { width: w, height: h } = s;
  const unit = Math.min(w, h);
  const shapes: string[] = [];
  const count = Math.round((14 + random() * 14) * detail);
  for (let i = 0; i < count; i++) {
    const fill = hsl(
      pick(hues, random) + (random() - 0.5) * 30,
      50 + random() * 45,
      35 + random() * 45,
      0.35 + random() * 0.5,
    );
    const x = random() * w;
    const y = random() * h;
    const size = unit * (0.04 + random() * 0.28);
    switch (Math.floor(random() * 4)) {
      case 0:
        shapes.push(
          `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${size.toFixed(1)}" fill="${fill}"/>`,
        );
        break;
      case 1:
        shapes.push(
          `<rect x="${(x - size).toFixed(1)}" y="${(y - size / 2).toFixed(1)}" width="${(size * 2).toFixed(1)}" height="${size.toFixed(1)}" fill="${fill}" transform="rotate(${Math.round(random() * 180)} ${x.toFixed(1)} ${y.toFixed(1)})"/>`,
        );
        break;
      case 2: {
        const points = Array.from(
          { length: 3 + Math.floor(random() * 4) },
          () =>
            `${(x + (random() - 0.5) * size * 2.4).toFixed(1)},${(y + (random() - 0.5) * size * 2.4).toFixed(1)}`,
        );
        shapes.push(`<polygon points="${points.join(' ')}" fill="${fill}"/>`);
        break;
      }
      default:
        shapes.push(
          `<path d="M${x.toFixed(1)} ${y.toFixed(1)} Q${(random() * w).toFixed(1)} ${(random() * h).toFixed(1)} ${(random() * w).toFixed(1)} ${(random() * h).toFixed(1)}" stroke="${fill}" stroke-width="${(unit * (0.004 + random() * 0.02)).toFixed(1)}" fill="none" stroke-linecap="round"/>`,
        );
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${shapes.join('')}</svg>`;
}
