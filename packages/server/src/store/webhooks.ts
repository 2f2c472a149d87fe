// Webhook endpoints a merchant registered. Every query takes the merchant id: another merchant's
// endpoint is simply not found.
import type { Selectable, Transaction } from 'kysely';
import type { PreviousSecret } from '../domain/rotation.ts';
import type { Database, Executor, WebhookEndpointsTable } from './schema.ts';
import { SECRET_COLUMNS, type SecretBox, type SecretColumn, secretContext } from './secrets.ts';

export interface WebhookEndpoint {
  id: string;
  merchantId: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: number;
  /** When a 410 answer disabled the endpoint; null while it is enabled. */
  disabledAt: number | null;
  /** The secret a rotation replaced, while it still signs (docs/decisions.md#webhook-delivery). */
  previous: PreviousSecret | null;
}

const [SECRET, PREVIOUS_SECRET] = SECRET_COLUMNS.filter((c) => c.table === 'webhook_endpoints') as [
  SecretColumn,
  SecretColumn,
];

/** The one place an endpoint row becomes a WebhookEndpoint: its secret is opened here (store/secrets.ts). */
function toEndpoint(row: Selectable<WebhookEndpointsTable>, secrets: SecretBox): WebhookEndpoint {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    secret: secrets.open(row.secret, secretContext(SECRET, row.id)),
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    previous:
      row.previous_secret === null || row.previous_secret_expires_at === null
        ? null
        : {
            secret: secrets.open(row.previous_secret, secretContext(PREVIOUS_SECRET, row.id)),
            expiresAt: row.previous_secret_expires_at,
          },
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
      disabled_at: null,
      previous_secret: null,
      previous_secret_expires_at: null,
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

/** The merchant's live endpoint (not revoked; disabled or not); undefined when it has none by that id. */
export async function findWebhookEndpoint(
  db: Executor,
  secrets: SecretBox,
  merchantId: string,
  endpointId: string,
): Promise<WebhookEndpoint | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && toEndpoint(row, secrets);
}

/** Endpoints by id, revoked ones included (a delivery made before a revocation must learn of it). */
export async function findWebhookEndpointsById(
  db: Executor,
  secrets: SecretBox,
  endpointIds: readonly string[],
): Promise<Map<string, WebhookEndpoint & { revoked: boolean }>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', endpointIds).execute();
  return new Map(
    rows.map((row) => [row.id, { revoked: row.revoked_at !== null, ...toEndpoint(row, secrets) }]),
  );
}

/** Replaces the endpoint's secret; the one replaced keeps signing until `previousExpiresAt`. */
export async function rotateWebhookEndpointSecret(
  trx: Transaction<Database>,
  secrets: SecretBox,
  endpoint: WebhookEndpoint,
  secret: string,
  previousExpiresAt: number,
): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({
      secret: secrets.seal(secret, secretContext(SECRET, endpoint.id)),
      previous_secret: secrets.seal(endpoint.secret, secretContext(PREVIOUS_SECRET, endpoint.id)),
      previous_secret_expires_at: previousExpiresAt,
    })
    .where('id', '=', endpoint.id)
    .execute();
}

/** Marks the endpoint disabled (its receiver answered 410), unless it already is. */
export async function disableWebhookEndpoint(db: Executor, endpointId: string, now: number): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: now })
    .where('id', '=', endpointId)
    .where('disabled_at', 'is', null)
    .execute();
}
