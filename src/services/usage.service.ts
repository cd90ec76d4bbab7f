import type { Actor } from '../domain/actor.ts';
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

/**
 * Usage reports (issue 32): an account reads its own, an admin everyone's (or one account's),
 * the operator's command line everyone's. The same rules for GraphQL, the CSV download and the
 * command line.
 */
export class UsageService {
  readonly #db: Db;

  constructor(deps: { db: Db }) {
    this.#db = deps.db;
  }

  /**
   * The caller's usage; an admin's covers every account unless `filter.accountId` names one.
   * Another account's, asked by anyone else, is 110202.
   */
  async report(actor: Actor, request: UsageRequest): Promise<UsageRow[]> {
    const query = checked(request);
    const asked = query.filter.accountId;
    if (actor.role !== 'admin') {
      if (asked !== undefined && asked !== actor.accountId) {
        throw new AppError(ErrorCode.Forbidden, 'Only an admin reads another account’s usage.', {
          field: 'accountId',
        });
      }
      return this.#run({ ...query, filter: { ...query.filter, accountId: actor.accountId } });
    }
    return this.#run(query);
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
