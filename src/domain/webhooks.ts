import { createHmac, randomBytes } from 'node:crypto';
import type { FieldProblem } from '../shared/errors.ts';
import { maxBalance } from './credits.ts';

/**
 * Webhooks as the Standard Webhooks specification describes them (standardwebhooks.com):
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, an HMAC-SHA256 of
 * `id.timestamp.body` under a `whsec_` secret, a JSON body `{type, timestamp, data}`.
 */

/** What an endpoint may subscribe to. */
export const webhookEventTypes = [
  'task.finished',
  'task.failed',
  'task.cancelled',
  'credits.low',
  'webhook.disabled',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * When a failed delivery is tried again, after its first attempt: exponential, about a day in
 * all (23.7 hours); after the last one the delivery has failed.
 */
export const retryDelaysMs: readonly number[] = [
  5_000, // 5 s
  30_000, // 30 s
  120_000, // 2 min
  600_000, // 10 min
  1_800_000, // 30 min
  3_600_000, // 1 h
  7_200_000, // 2 h
  14_400_000, // 4 h
  28_800_000, // 8 h
  28_800_000, // 8 h
];

/** When attempt `attempts` (1 = the first) failed: the next try, or null when there is none. */
export function nextAttemptAt(attempts: number, failedAt: Date): Date | null {
  const delay = retryDelaysMs[attempts - 1];
  return delay === undefined ? null : new Date(failedAt.getTime() + delay);
}

/** A sealed secret's binding: it opens only on the row of the endpoint it was made for. */
export const secretAad = (endpointId: string) => `webhook-secret\u0000${endpointId}`;

/** How long a rotated secret keeps signing beside the new one. */
export const rotationGraceMs = 24 * 3_600_000; // 24 hours

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The `webhook-signature` value: one `v1,<base64>` per secret, space-separated. */
export function signWebhook(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`);
      return `v1,${mac.digest('base64')}`;
    })
    .join(' ');
}

const maxUrlLength = 2_000;
const maxDescriptionLength = 200;

/** Problems of an endpoint as written: the URL's shape, the events, the description. */
export function endpointProblems(input: {
  url?: string | undefined;
  events?: readonly string[] | undefined;
  description?: string | undefined;
  creditsLowBelow?: number | undefined;
}): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const below = input.creditsLowBelow;
  if (below !== undefined && (!Number.isInteger(below) || below < 1 || below > maxBalance)) {
    problems.push({ field: 'creditsLowBelow', message: `must be 1 to ${maxBalance}` });
  }
  if (input.url !== undefined) {
    if (input.url.length > maxUrlLength || !URL.canParse(input.url)) {
      problems.push({
        field: 'url',
        message: `must be an absolute URL of at most ${maxUrlLength} characters`,
      });
    } else {
      const url = new URL(input.url);
      if (url.username !== '' || url.password !== '')
        problems.push({ field: 'url', message: 'must not carry a user name or password' });
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        problems.push({ field: 'url', message: 'must be an https URL' });
    }
  }
  if (input.events !== undefined) {
    if (input.events.length === 0)
      problems.push({ field: 'events', message: 'must name at least one event' });
    input.events.forEach((event, i) => {
      if (!(webhookEventTypes as readonly string[]).includes(event)) {
        problems.push({
          field: `events[${i}]`,
          message: `must be one of ${webhookEventTypes.join(', ')}`,
        });
      }
    });
  }
  if (input.description !== undefined && input.description.length > maxDescriptionLength) {
    problems.push({
      field: 'description',
      message: `must be at most ${maxDescriptionLength} characters`,
    });
  }
  return problems;
}
