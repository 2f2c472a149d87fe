import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhookEndpointsTable } from './schema.ts';

export interface WebhookEndpoint {
  id: string;
  merchantId: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: number;
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    secret: row.secret,
    createdAt: row.created_at,
  };
}

export async function listWebhookEndpoints(
  db: Kysely<Database>,
  merchantId: string,
): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toEndpoint);
}

/**
 * Inserts an endpoint unless the merchant already has `max` live ones. The count and the insert run in
 * one transaction; on PostgreSQL the merchant row is locked so that concurrent creates cannot pass the cap.
 */
export async function insertWebhookEndpoint(
  db: Kysely<Database>,
  endpoint: WebhookEndpoint,
  max: number,
  lockMerchant: boolean,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (lockMerchant) {
      await trx
        .selectFrom('merchants')
        .select('id')
        .where('id', '=', endpoint.merchantId)
        .forUpdate()
        .execute();
    }
    const { n } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('merchant_id', '=', endpoint.merchantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(n) >= max) return false;
    await trx
      .insertInto('webhook_endpoints')
      .values({
        id: endpoint.id,
        merchant_id: endpoint.merchantId,
        url: endpoint.url,
        events: JSON.stringify(endpoint.events),
        secret: endpoint.secret,
        created_at: endpoint.createdAt,
        revoked_at: null,
      })
      .execute();
    return true;
  });
}

/** Revokes the merchant's endpoint; false when it has no such live endpoint. */
export async function revokeWebhookEndpoint(
  db: Kysely<Database>,
  merchantId: string,
  endpointId: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_endpoints')
    .set({ revoked_at: now })
    .where('id', '=', endpointId)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
