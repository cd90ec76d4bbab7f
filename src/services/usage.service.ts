import type { Actor } from '../domain/actor.ts';
import { spenderOf } from '../domain/spending-limits.ts';
import {
  maxUsageRows,
  type UsageDimension,
  type UsageQuery,
  type UsageRequest,
  type UsageRow,
  type UsageText,
  usageQueryProblems,
  usageRequestOfText,
} from '../domain/usage.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import type { Db } from '../store/database.ts';
import { usageReport } from '../store/usage.store.ts';
import type { ManagementGuard } from './management-guard.ts';

/**
 * Usage reports (issue 32): an account reads its own, an admin everyone's (or one account's),
 * the operator's command line everyone's. The same rules for GraphQL, the CSV download and the
 * command line.
 */
export class UsageService {
  readonly #db: Db;
  readonly #managers: Pick<ManagementGuard, 'right'>;

  constructor(deps: { db: Db; managers: Pick<ManagementGuard, 'right'> }) {
    this.#db = deps.db;
    this.#managers = deps.managers;
  }

  /**
   * The caller's usage; an admin's covers every account unless `filter.accountId` names one.
   * Another account's, asked by anyone else, is 110202. A key with spending limits reads only
   * its own spending (the account's other credentials are not its business), and an admin's
   * limited key is no admin here either.
   */
  async report(actor: Actor, request: UsageRequest): Promise<UsageRow[]> {
    const query = checked(request);
    const asked = query.filter.accountId;
    const right = await this.#managers.right(actor);
    if (actor.role === 'admin' && right === 'full') return this.#run(query);
    if (asked !== undefined && asked !== actor.accountId) {
      throw new AppError(ErrorCode.Forbidden, 'Only an admin reads another account’s usage.', {
        field: 'accountId',
      });
    }
    const own = { ...query.filter, accountId: actor.accountId };
    if (right === 'full') return this.#run({ ...query, filter: own });
    const spender = spenderOf(actor.credential);
    if (spender === null || (query.filter.credential ?? spender) !== spender) {
      throw new AppError(
        ErrorCode.Forbidden,
        'A key with spending limits reads its own usage only.',
        { field: 'credential' },
      );
    }
    return this.#run({ ...query, filter: { ...own, credential: spender } });
  }

  /** Operator (command line): every account's usage, or one's. */
  async operatorReport(request: UsageRequest): Promise<UsageRow[]> {
    return this.#run(checked(request));
  }

  /** Operator (command line): the report its options spell (`usageRequestOfText`). */
  async operatorReportOfText(text: UsageText): Promise<UsageRow[]> {
    return this.operatorReport(usageRequestOfText(text));
  }

  async #run(query: UsageQuery): Promise<UsageRow[]> {
    const rows = await usageReport(this.#db, query, maxUsageRows + 1);
    if (rows.length > maxUsageRows) {
      throw invalidInput([
        {
          field: 'groupBy',
          message: `the report has more than ${maxUsageRows} rows: group by fewer dimensions, filter, or ask for a shorter range`,
        },
      ]);
    }
    return rows;
  }
}

function checked(request: UsageRequest): UsageQuery {
  const problems = usageQueryProblems(request);
  if (problems.length > 0) throw invalidInput(problems);
  const filter = request.filter ?? {};
  return {
    from: request.from,
    to: request.to,
    groupBy: request.groupBy as UsageDimension[],
    // Absent and null both mean "not narrowed".
    filter: {
      ...(filter.accountId == null ? {} : { accountId: filter.accountId }),
      ...(filter.modelId == null ? {} : { modelId: filter.modelId }),
      ...(filter.kind == null ? {} : { kind: filter.kind }),
      ...(filter.backend == null ? {} : { backend: filter.backend }),
      ...(filter.credential == null ? {} : { credential: filter.credential }),
    },
  };
}
