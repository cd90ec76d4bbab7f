import type { EngineOutput } from '../engines/engine.ts';
import { newId } from '../shared/ids.ts';
import type { MediaStorage } from '../storage/media-storage.ts';
import type { NewMediaRow } from '../store/media.store.ts';

/**
 * Writes an engine's files to storage, in order, and answers their media rows; `rows` holds
 * each one as soon as its file is written, so a caller can remove them when a later one fails.
 */
export async function storeOutputs(
  storage: MediaStorage,
  accountId: string,
  contentId: string,
  outputs: readonly EngineOutput[],
  rows: NewMediaRow[] = [],
): Promise<NewMediaRow[]> {
  for (const [position, output] of outputs.entries()) {
    const id = newId('med');
    const storageKey = `media/${accountId}/${id}.${output.extension}`;
    await storage.put(storageKey, output.bytes);
    rows.push({
      id,
      accountId,
      contentId,
      position,
      kind: output.kind,
      mimeType: output.mimeType,
      bytes: output.bytes.length,
      width: output.width ?? null,
      height: output.height ?? null,
      durationMs: output.durationMs === undefined ? null : Math.round(output.durationMs),
      storageKey,
      filename: `${contentId}-${position + 1}.${output.extension}`,
    });
  }
  return rows;
}
