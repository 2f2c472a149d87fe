// Webhook endpoints a merchant registers (docs/api.md#webhook-endpoints): at most 16 live ones each,
// the URL checked as delivery will need it, the whsec_ secret made here and shown once.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { EventType } from '../events/types.ts';
import { ids } from '../ids.ts';
import { lockMerchantRow } from '../store/merchants.ts';
import {
  countActiveWebhookEndpoints,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  revokeWebhookEndpoint,
  type WebhookEndpoint,
} from '../store/webhooks.ts';
import { type AnswerSpec, recordAnswer } from './idempotency.ts';
import { checkWebhookEndpointUrl } from './urls.ts';

export const MAX_ENDPOINTS_PER_MERCHANT = 16;

export async function createWebhookEndpoint(
  deps: Deps,
  merchantId: string,
  input: { url: string; events: (EventType | '*')[] },
  answer?: AnswerSpec<WebhookEndpoint>,
): Promise<WebhookEndpoint> {
  const problem = await checkWebhookEndpointUrl('url', input.url, deps.config.serviceEnv);
  if (problem) throw new ServiceError('invalid_request', { message: problem, details: [problem] });
  const endpoint: WebhookEndpoint = {
    id: ids.webhookEndpoint(),
    merchantId,
    url: input.url,
    // '*' already means every type; keep the list as the merchant wrote it otherwise.
    events: input.events.includes('*') ? ['*'] : input.events,
    secret: ids.webhookSecret(),
    createdAt: deps.clock.now(),
  };
  await deps.db.kysely.transaction().execute(async (trx) => {
    // The count and the insert run in one transaction; on PostgreSQL the merchant row is locked so
    // that concurrent creates cannot pass the cap (SQLite has a single writer already).
    if (deps.db.dialect === 'postgres') await lockMerchantRow(trx, merchantId);
    if ((await countActiveWebhookEndpoints(trx, merchantId)) >= MAX_ENDPOINTS_PER_MERCHANT)
      throw new ServiceError('webhook_limit_reached');
    await insertWebhookEndpoint(trx, deps.db.secrets, endpoint);
    await recordAnswer(trx, answer, endpoint);
  });
  return endpoint;
}

export async function deleteWebhookEndpoint(
  deps: Deps,
  merchantId: string,
  endpointId: string,
): Promise<void> {
  const revoked = await revokeWebhookEndpoint(deps.db.kysely, merchantId, endpointId, deps.clock.now());
  if (!revoked) throw new ServiceError('webhook_not_found');
}

export const listMerchantWebhookEndpoints = (deps: Deps, merchantId: string): Promise<WebhookEndpoint[]> =>
  listWebhookEndpoints(deps.db.kysely, deps.db.secrets, merchantId);
