// The API request log (docs/dashboard.md#api-request-log): one row per answered merchant API request that
// carried a working key, written in batches apart from any request's transaction (flows/request-log.ts),
// read by the developers page newest first, and deleted after 7 days by the housekeeping loop.
import { CompiledQuery } from 'kysely';
import { newestFirst } from './paging.ts';
import type { Executor } from './schema.ts';

export interface ApiRequestRecord {
  /** The request id (req_…), as the answer carried it. */
  id: string;
  merchantId: string;
  method: string;
  /** The route pattern (/v1/sessions/:sessionId), never the URL. */
  route: string;
  status: number;
  /** From the request's arrival to its answer's end, microseconds. */
  durationUs: number;
  /** The key's first 16 characters. */
  keyPrefix: string;
  createdAt: number;
}

const COLUMNS = 'id, merchant_id, method, route, status, duration_us, key_prefix, created_at';

/** SQLite: rows a statement takes at most (8 columns × 256 stays well inside its 32766 variables). */
const SQLITE_CHUNK = 256;

/**
 * SQLite's statement for `size` rows. Its text depends on the row count only, and the sizes used are few
 * (powers of two), so the prepared statements are reused rather than each batch's size preparing one
 * more and pushing the hot paths' statements out of the statement cache (store/db.ts).
 */
const sqliteInserts = new Map<number, string>();
function sqliteInsert(size: number): string {
  let text = sqliteInserts.get(size);
  if (!text) {
    const row = '(?, ?, ?, ?, ?, ?, ?, ?)';
    text = `insert into api_requests (${COLUMNS}) values ${Array.from({ length: size }, () => row).join(', ')}`;
    sqliteInserts.set(size, text);
  }
  return text;
}

/** PostgreSQL: every row in one parameter, a JSON array the server unpacks. */
const POSTGRES_INSERT =
  `insert into api_requests (${COLUMNS}) ` +
  'select r ->> 0, r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::integer, (r ->> 5)::integer, r ->> 6, (r ->> 7)::bigint ' +
  'from jsonb_array_elements($1::jsonb) as r';

const valuesOf = (r: ApiRequestRecord) =>
  [r.id, r.merchantId, r.method, r.route, r.status, r.durationUs, r.keyPrefix, r.createdAt] as const;

/**
 * Writes the records. This runs after nearly every API answer, so it is written for its cost: a fixed
 * statement executed as compiled (no query builder per row), many rows a statement — on SQLite bound as
 * parameters in chunks of a power of two, on PostgreSQL as one JSON parameter (what our process then does
 * is one JSON.stringify; the unpacking is the database server's). Measured in docs/benchmarks.md.
 */
export async function insertApiRequests(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  records: readonly ApiRequestRecord[],
): Promise<void> {
  if (records.length === 0) return;
  if (dialect === 'postgres') {
    await db.executeQuery(CompiledQuery.raw(POSTGRES_INSERT, [JSON.stringify(records.map(valuesOf))]));
    return;
  }
  for (let i = 0; i < records.length; ) {
    let size = SQLITE_CHUNK;
    while (size > records.length - i) size >>= 1;
    const parameters: unknown[] = [];
    for (const record of records.slice(i, i + size)) parameters.push(...valuesOf(record));
    await db.executeQuery(CompiledQuery.raw(sqliteInsert(size), parameters));
    i += size;
  }
}

export interface ApiRequestFilter {
  /** Only requests made at or after this time. */
  since: number;
  /** The last row of the previous page: the page starts after it. */
  after?: { createdAt: number; id: string };
  /** One request, by its id. */
  requestId?: string;
}

/**
 * The merchant's requests newest first (api_requests_merchant_created); one more than `limit` to tell more.
 * A lookup by request id reads the merchant's range of that index (it holds the id), not one entry: the
 * id has no index of its own (see the migration).
 */
export async function listApiRequests(
  db: Executor,
  merchantId: string,
  limit: number,
  filter: ApiRequestFilter,
): Promise<ApiRequestRecord[]> {
  let query = db
    .selectFrom('api_requests')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', filter.since);
  if (filter.requestId !== undefined) query = query.where('id', '=', filter.requestId);
  const rows = await newestFirst(query, filter.after, limit).execute();
  return rows.map((r) => ({
    id: r.id,
    merchantId: r.merchant_id,
    method: r.method,
    route: r.route,
    status: Number(r.status),
    durationUs: Number(r.duration_us),
    keyPrefix: r.key_prefix,
    createdAt: Number(r.created_at),
  }));
}

/**
 * Deletes the merchant's oldest rows older than `before`, through api_requests_merchant_created; answers
 * how many. Bounded, so that one sweep never holds the write lock long: when more than `limit` are older,
 * the batch ends with the millisecond of the (`limit` + 1)-th oldest (more than `limit` rows, so the caller
 * goes on), else it takes them all (at most `limit`).
 */
export async function deleteApiRequestsBefore(
  db: Executor,
  merchantId: string,
  before: number,
  limit: number,
): Promise<number> {
  const edge = await db
    .selectFrom('api_requests')
    .select('created_at')
    .where('merchant_id', '=', merchantId)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(1)
    .offset(limit)
    .executeTakeFirst();
  const result = await db
    .deleteFrom('api_requests')
    .where('merchant_id', '=', merchantId)
    .where('created_at', edge ? '<=' : '<', edge ? Number(edge.created_at) : before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
