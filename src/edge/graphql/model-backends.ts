import type { PoolReport } from '../../observability/pool-report.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { type GraphqlContext, requireActor } from './context.ts';

const reads = new WeakMap<GraphqlContext, Promise<readonly PoolReport[]>>();

/**
 * A model's backends for an admin (`Model.backends`): every pool is read once per request,
 * however many models the response lists. Anyone else is refused (110202).
 */
export async function modelBackends(
  modelId: string,
  ctx: GraphqlContext,
): Promise<PoolReport['backends']> {
  if (requireActor(ctx).role !== 'admin') {
    throw new AppError(ErrorCode.Forbidden, 'Model.backends is for admin accounts.');
  }
  let pools = reads.get(ctx);
  if (pools === undefined) {
    pools = ctx.services.pools();
    reads.set(ctx, pools);
  }
  return (await pools).find((pool) => pool.modelId === modelId)?.backends ?? [];
}
