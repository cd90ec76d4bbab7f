import type { FastifyReply } from 'fastify';
import type { Actor } from '../../domain/actor.ts';
import { FinishCode } from '../../domain/finish-code.ts';
import type { GenerationKind } from '../../domain/model.ts';
import type { ContentView } from '../../services/generation-views.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { Services } from '../services.ts';

/**
 * Submits one generation and waits, at most `waitMs`, for it to finish: the OpenAI API answers
 * with the media itself. The IDs go into `Atelier-Content-Id` and `Atelier-Task-Id` at once, so
 * every later answer (an error included) names the generation. The wait never cancels it: a
 * client that disconnects only stops this wait (the result is in its history), and one whose
 * wait runs out gets 160001 with the IDs. A generation that finished without a result
 * (refunded) is 160002 with its finish code and message.
 */
export async function submitAndAwait(
  services: Services,
  actor: Actor,
  kind: GenerationKind,
  input: Readonly<Record<string, unknown>>,
  reply: FastifyReply,
  waitMs: number,
): Promise<ContentView> {
  const submitted = await services.generations.submit(actor, kind, input).catch((error) => {
    // A submission whose outcome is unknown names the generation it may be: the headers say so,
    // and the error handler then never invites a retry that could charge a second time.
    const ids = error instanceof AppError ? error.details : {};
    if (typeof ids.contentId === 'string' && typeof ids.taskId === 'string') {
      reply.header('atelier-content-id', ids.contentId);
      reply.header('atelier-task-id', ids.taskId);
    }
    throw error;
  });
  reply.header('atelier-content-id', submitted.contentId);
  reply.header('atelier-task-id', submitted.taskId);
  const ids = { contentId: submitted.contentId, taskId: submitted.taskId };

  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), waitMs);
  // The response closes before it is sent only when the client went away.
  const gone = () => {
    reply.log.info(ids, 'client gone before its generation finished; the generation goes on');
    stop.abort();
  };
  reply.raw.once('close', gone);
  let finished = false;
  try {
    const updates = await services.results.watchTask(actor, submitted.taskId, stop.signal);
    for await (const task of updates) {
      if (task.status !== 'finished') continue;
      finished = true;
      if (task.finishCode !== FinishCode.Ok) {
        throw new AppError(
          ErrorCode.GenerationFailed,
          `The generation finished without a result (finish code ${task.finishCode}: ${task.finishMessage ?? 'no message'}); its credits were refunded.`,
          { ...ids, finishCode: task.finishCode, finishMessage: task.finishMessage },
        );
      }
      break;
    }
  } finally {
    clearTimeout(timer);
    reply.raw.off('close', gone);
  }
  if (!finished) {
    throw new AppError(
      ErrorCode.GenerationPending,
      `The generation is still running after ${waitMs / 1000} s. It goes on and is not lost: read content ${ids.contentId} (task ${ids.taskId}) later, or resend this request with the same Idempotency-Key to wait again without a second charge.`,
      ids,
    );
  }
  return services.results.getContent(actor, submitted.contentId);
}
