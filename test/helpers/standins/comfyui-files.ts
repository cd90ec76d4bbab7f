import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { type RecordedRequest, type StandinServer, sendEmpty, sendJson } from './standin-server.ts';

/**
 * The ComfyUI stand-in's input/output/temp folders, kept in memory, with the two routes that
 * touch them, as `../shared/protocols/comfyui.md` describes `server.py`:
 * `GET /view` (404 without filename or file, 400 for `..`/leading `/` or an unknown type, 403 for
 * a subfolder escaping its folder, a ` [output]`-style suffix picking the folder, Content-Type
 * from the extension, `Content-Disposition: filename="…"`; `preview`/`channel` are accepted and
 * ignored) and `POST /upload/image` (multipart `image`, `type`, `subfolder`, `overwrite`;
 * ` (1)`, ` (2)`… on a name collision unless the bytes are identical; `{name, subfolder, type}`).
 */

export type FolderType = 'input' | 'output' | 'temp';

const folderTypes: readonly string[] = ['input', 'output', 'temp'];

const contentTypes: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.wav': 'audio/wav',
  '.flac': 'audio/flac',
};

/** The subfolder normalised, or undefined when it escapes its folder. */
function contained(subfolder: string): string | undefined {
  const normal = path.posix.normalize(subfolder === '' ? '.' : subfolder).replace(/\/$/, '');
  if (normal === '..' || normal.startsWith('../') || normal.startsWith('/')) return undefined;
  return normal === '.' ? '' : normal;
}

export class ComfyFiles {
  #files = new Map<string, Buffer>();
  #counters = new Map<string, number>();

  get(type: FolderType, subfolder: string, filename: string): Buffer | undefined {
    return this.#files.get(`${type}/${subfolder === '' ? '' : `${subfolder}/`}${filename}`);
  }

  put(type: FolderType, subfolder: string, filename: string, bytes: Buffer): void {
    this.#files.set(`${type}/${subfolder === '' ? '' : `${subfolder}/`}${filename}`, bytes);
  }

  /** Names in a folder as a graph references them (`cat.png`, `sub/cat.png`). */
  names(type: FolderType): string[] {
    return [...this.#files.keys()]
      .filter((key) => key.startsWith(`${type}/`))
      .map((key) => key.slice(type.length + 1));
  }

  /**
   * Saves an output under the next counter for its prefix: `<prefix>_00001_.png` as core save
   * nodes name files, `<prefix>_00001.mp4` as Video Helper Suite does. Returns `sub/name`.
   */
  save(
    type: FolderType,
    subfolder: string,
    prefix: string,
    extension: string,
    bytes: Buffer,
    style: 'comfy' | 'vhs',
  ): string {
    const key = `${type}/${subfolder}/${prefix}`;
    const counter = (this.#counters.get(key) ?? 0) + 1;
    this.#counters.set(key, counter);
    const number = String(counter).padStart(5, '0');
    const filename =
      style === 'vhs' ? `${prefix}_${number}.${extension}` : `${prefix}_${number}_.${extension}`;
    this.put(type, subfolder, filename, bytes);
    return subfolder === '' ? filename : `${subfolder}/${filename}`;
  }

  async view(request: RecordedRequest, res: ServerResponse, server: StandinServer): Promise<void> {
    let filename = request.query.get('filename');
    if (filename === null || filename === '') return sendEmpty(res, 404);
    let type = request.query.get('type') ?? 'output';
    const suffix = /^(.*) \[(input|output|temp)\]$/.exec(filename);
    if (suffix !== null) [, filename, type] = suffix as unknown as [string, string, string];
    if (filename.startsWith('/') || filename.includes('..')) return sendEmpty(res, 400);
    if (!folderTypes.includes(type)) return sendEmpty(res, 400);
    const subfolder = contained(request.query.get('subfolder') ?? '');
    if (subfolder === undefined) return sendEmpty(res, 403);
    const bytes = this.get(type as FolderType, subfolder, filename);
    if (bytes === undefined) return sendEmpty(res, 404);
    const contentType =
      contentTypes[path.extname(filename).toLowerCase()] ?? 'application/octet-stream';
    await server.sendBytes(request, res, bytes, {
      'content-type': contentType,
      'content-disposition': `filename="${filename}"`,
    });
  }

  async upload(request: RecordedRequest, res: ServerResponse): Promise<void> {
    let form: FormData;
    try {
      const contentType = String(request.headers['content-type'] ?? '');
      form = await new Request('http://stand-in/upload', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: new Uint8Array(request.body),
      }).formData();
    } catch {
      return sendEmpty(res, 400);
    }
    const image = form.get('image');
    if (!(image instanceof File) || image.name === '') return sendEmpty(res, 400);
    const type = String(form.get('type') ?? 'input');
    if (!folderTypes.includes(type)) return sendEmpty(res, 400);
    const subfolder = contained(String(form.get('subfolder') ?? ''));
    if (subfolder === undefined || image.name.includes('/') || image.name.includes('..')) {
      return sendEmpty(res, 400);
    }
    const overwrite = ['true', '1'].includes(String(form.get('overwrite') ?? ''));
    const bytes = Buffer.from(await image.arrayBuffer());
    const name = overwrite
      ? image.name
      : this.#freeName(type as FolderType, subfolder, image.name, bytes);
    this.put(type as FolderType, subfolder, name, bytes);
    sendJson(res, 200, { name, subfolder, type });
  }

  /** `cat.png`, else `cat (1).png`, `cat (2).png`…; an identical file keeps its name. */
  #freeName(type: FolderType, subfolder: string, filename: string, bytes: Buffer): string {
    const extension = path.extname(filename);
    const stem = filename.slice(0, filename.length - extension.length);
    let name = filename;
    for (let i = 1; ; i += 1) {
      const existing = this.get(type, subfolder, name);
      if (existing === undefined || existing.equals(bytes)) return name;
      name = `${stem} (${i})${extension}`;
    }
  }
}
