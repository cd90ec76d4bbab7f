import { z } from 'zod';
import { toolResult } from '../tool-result.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** `get_download_urls`: fresh, expiring URLs for media of the account. */
export const registerGetDownloadUrls: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'get_download_urls',
    defined('get_download_urls', () => ({
      title: 'Download links',
      description:
        'Fresh, expiring download URLs for media of this account (ask again when they expire).',
      inputSchema: { media_ids: z.array(z.string()) },
      outputSchema: {
        urls: z.array(z.object({ media_id: z.string(), url: z.string(), expires_at: z.string() })),
      },
      annotations: annotations.readFresh,
    })),
    ({ media_ids }) =>
      run(async () => {
        const urls = await services.media.downloadUrls(actor, media_ids);
        return toolResult({
          urls: urls.map((u) => ({
            media_id: u.mediaId,
            url: u.url,
            expires_at: u.expiresAt.toISOString(),
          })),
        });
      }),
  );
};
