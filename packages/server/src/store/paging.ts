// Keyset paging newest first (docs/decisions.md#session-list-paging): lists whose cursor is their last
// row's (created_at, id) — events, the dashboard's sessions, the API request log — page the same way.
import { type SelectQueryBuilder, sql } from 'kysely';

/** The last row of the previous page: the next page starts strictly after it. */
export interface PageAfter {
  createdAt: number;
  id: string;
}

/**
 * `query` (over one table with `created_at` and `id`) newest first, strictly after `after` when given,
 * one more row than `limit` so the caller can tell has_more.
 */
export function newestFirst<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  after: PageAfter | undefined,
  limit: number,
): SelectQueryBuilder<DB, TB, O> {
  const page = after
    ? query.where(
        sql<boolean>`(created_at < ${after.createdAt} or (created_at = ${after.createdAt} and id < ${after.id}))`,
      )
    : query;
  return page
    .orderBy(sql`created_at`, 'desc')
    .orderBy(sql`id`, 'desc')
    .limit(limit + 1);
}
