// Webhook endpoints a merchant registered. Every query takes the merchant id: another merchant's
// endpoint is simply not found.
import type { Selectable, Transaction } from 'kysely';
import type { Database, WebhookEndpointsTable } from './schema.ts';
import { type SecretBox, secretContext } from './secrets.ts';
import type { Executor } from './sessions.ts';

export interface WebhookEndpoint {
  id: string;
  merchantId: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: number;
}

const SECRET = { table: 'webhook_endpoints', column: 'secret' } as const;

/** The one place an endpoint row becomes a WebhookEndpoint: its secret is opened here (store/secrets.ts). */
function toEndpoint(row: Selectable<WebhookEndpointsTable>, secrets: SecretBox): WebhookEndpoint {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    secret: secrets.open(row.secret, secretContext(SECRET, row.id)),
    createdAt: row.created_at,
  };
}

export async function listWebhookEndpoints(
  db: Executor,
  secrets: SecretBox,
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
  return rows.map((row) => toEndpoint(row, secrets));
}

export async function countActiveWebhookEndpoints(db: Executor, merchantId: string): Promise<number> {
  const { n } = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export async function insertWebhookEndpoint(
  trx: Transaction<Database>,
  secrets: SecretBox,
  endpoint: WebhookEndpoint,
): Promise<void> {
  await trx
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      merchant_id: endpoint.merchantId,
      url: endpoint.url,
      events: JSON.stringify(endpoint.events),
      secret: secrets.seal(endpoint.secret, secretContext(SECRET, endpoint.id)),
      created_at: endpoint.createdAt,
      revoked_at: null,
    })
    .execute();
}

/** Revokes the merchant's endpoint; false when it has no such live endpoint. */
export async function revokeWebhookEndpoint(
  db: Executor,
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
