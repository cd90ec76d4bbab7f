import type { Actor } from '../domain/actor.ts';
import type { ReferenceChecks } from '../domain/kinds/kind.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import type { LibraryService } from './library.service.ts';
import type { VoiceService } from './voice.service.ts';

/**
 * The references of a request checked for one caller. A submission checks every one against
 * the caller's account; an estimate (perhaps without a credential) only what its price
 * depends on: an uploaded media's length, and the voices, which are public.
 */
export function referenceChecks(
  deps: { readonly library: LibraryService; readonly voices: VoiceService },
  actor: Actor | null,
  purpose: 'submit' | 'estimate',
): ReferenceChecks {
  const { library, voices } = deps;
  const submitter = purpose === 'submit' ? actor : null;
  return {
    async elements(ids) {
      if (submitter !== null) await library.elementsFor(submitter, ids);
    },
    async media(id, kind, field) {
      if (submitter !== null) await library.mediaOf(submitter, id, kind, field);
    },
    async mediaDuration(id, kind, field) {
      if (actor === null) {
        throw new AppError(
          ErrorCode.Unauthenticated,
          `The price of an uploaded ${kind} depends on its length: estimating it needs a credential.`,
        );
      }
      return (await library.mediaOf(actor, id, kind, field)).duration_ms;
    },
    async avatar(id) {
      if (submitter === null) return undefined;
      return { voiceModelId: (await library.getAvatar(submitter, id)).voiceModelId };
    },
    async voice(id, field, modelId) {
      await voices.forModel(actor, id, modelId, field);
    },
  };
}
