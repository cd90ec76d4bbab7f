import { isIP } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import { isPublicHostname } from '../../shared/public-address.ts';
import {
  type AddressCheckOptions,
  fetchPublic,
  loggedReason,
  privateAddressProblem,
} from '../../shared/public-fetch.ts';
import { decodeWhole, ImageError, sharp } from '../../shared/sharp.ts';
import type { Ffmpeg } from '../media/ffmpeg.ts';
import { measureAudio } from '../speech/audio.ts';
import { type RemoteDeps, RemoteOutputError } from './remote-deps.ts';

/** How long one output download may take when the engine names no deadline of its own. */
const defaultOutputTimeoutMs = 120_000; // 2 minutes

/** Largest decoded image accepted from a provider: 16k × 16k, as the model schema allows. */
const maxImagePixels = 16_384 * 16_384;

export interface RemoteDepsOptions {
  /** Credentials by variable name, read by config at start. */
  readonly secrets: ReadonlyMap<string, string>;
  readonly ffmpeg: Ffmpeg;
  readonly observe: RemoteDeps['observe'];
  readonly clock?: Clock;
  /** Traces each call of a model server (observability/tracing.ts `tracedCall`). */
  readonly traceCall?: RemoteDeps['traceCall'];
  /** Tests only: how public hosts resolve and which local address stands for them. */
  readonly publicNetwork?: AddressCheckOptions & { ca?: string };
}

/** The production {@link RemoteDeps}: sharp and ffprobe for checks, the CIMD address filter. */
export function createRemoteDeps(o: RemoteDepsOptions): RemoteDeps {
  return {
    secret: (name) => o.secrets.get(name),
    fetchOutput: (url, options) => fetchOutput(url, options, o.publicNetwork ?? {}),
    observe: o.observe,
    probe: {
      async image(bytes) {
        // The model server's fault only when sharp refused the image, not when its worker failed.
        const unreadable = (error: Error): never => {
          if (!(error instanceof ImageError)) throw error;
          throw new RemoteOutputError(`not a readable image (${error.message.split('\n')[0]})`);
        };
        const options = { limitInputPixels: maxImagePixels };
        const meta = await sharp(bytes, { ...options, failOn: 'error' })
          .metadata()
          .catch(unreadable);
        if (meta.width === undefined || meta.height === undefined) {
          throw new RemoteOutputError('an image without dimensions');
        }
        const size = { width: meta.width, height: meta.height };
        // The header is not the image: a truncated output is refused, not stored.
        await decodeWhole(bytes, size, options).catch(unreadable);
        return { format: meta.format ?? 'unknown', ...size };
      },
      async media(bytes, signal) {
        const unreadable = (error: Error): never => {
          signal.throwIfAborted();
          throw new RemoteOutputError(`not readable media (${error.message})`);
        };
        const decodedMs = (audio: Buffer, s: AbortSignal) =>
          measureAudio(o.ffmpeg, audio, s).catch(unreadable);
        const probed = await o.ffmpeg.probe(bytes, signal).catch(unreadable);
        const hasVideo = probed.streams.some((s) => s.type === 'video');
        const hasAudio = probed.streams.some((s) => s.type === 'audio');
        // A piped Ogg or MP3 states no length: audio alone is measured by decoding it.
        const durationMs =
          probed.durationMs ?? (hasAudio && !hasVideo ? await decodedMs(bytes, signal) : null);
        return { durationMs, hasVideo, hasAudio };
      },
    },
    ...(o.clock === undefined ? {} : { clock: o.clock }),
    ...(o.traceCall === undefined ? {} : { traceCall: o.traceCall }),
  };
}

async function fetchOutput(
  href: string,
  o: Parameters<RemoteDeps['fetchOutput']>[1],
  network: AddressCheckOptions & { ca?: string },
): Promise<{ bytes: Buffer; contentType: string | null }> {
  const url = URL.canParse(href) ? new URL(href) : null;
  if (url === null)
    throw new RemoteOutputError('the provider returned an output URL that is not a URL');
  const own = url.origin === new URL(o.providerOrigin).origin;
  if (!own) {
    const problem = publicHostProblem(url);
    if (problem !== null) {
      throw new RemoteOutputError(`output URL refused: ${problem}`);
    }
  }
  try {
    const { bytes, headers } = await fetchPublic(url, {
      ...network,
      maxBytes: o.maxBytes,
      timeoutMs: o.timeoutMs ?? defaultOutputTimeoutMs,
      signal: o.signal,
      trustedHost: own,
      // The provider's credential goes to the provider's own origin and nowhere else.
      ...(own && o.providerAuthorization !== undefined
        ? { headers: { authorization: o.providerAuthorization } }
        : {}),
    });
    return { bytes, contentType: headers['content-type'] ?? null };
  } catch (error) {
    o.signal.throwIfAborted();
    // The operator's log: the reason behind a uniform message.
    throw new RemoteOutputError(`output could not be fetched (${loggedReason(error)})`);
  }
}

/** Why a URL that is not the provider's own may not be fetched, or null (https, public host). */
function publicHostProblem(url: URL): string | null {
  if (url.protocol !== 'https:') return `${url.protocol} is not https`;
  if (url.username !== '' || url.password !== '') return 'credentials in the URL';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) return privateAddressProblem(host);
  return isPublicHostname(url.hostname) ? null : `${url.hostname} is not a public host`;
}
