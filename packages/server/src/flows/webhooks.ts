// Webhook endpoints a merchant registers (docs/api.md#webhook-endpoints): at most 16 live ones each,
// the URL checked as delivery will need it, the whsec_ secret made here and shown once.
import type { Deps } from '../deps.ts';
import type { EventType } from '../domain/event-types.ts';
import { ROTATION_GRACE_MS } from '../domain/rotation.ts';
import { ServiceError } from '../errors.ts';
import { recordTestEvent, type TestEventPayload } from '../events/outbox.ts';
import { ids } from '../ids.ts';
import { failPendingDeliveriesTo, insertDeliveries } from '../store/deliveries.ts';
import { lockMerchantRow } from '../store/merchants.ts';
import {
  countActiveWebhookEndpoints,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  revokeWebhookEndpoint,
  rotateWebhookEndpointSecret,
  type WebhookEndpoint,
} from '../store/webhooks.ts';
import { newDelivery } from './deliveries.ts';
import { type AnswerSpec, recordAnswer } from './idempotency.ts';
import { checkWebhookEndpointUrl } from './urls.ts';

export const MAX_ENDPOINTS_PER_MERCHANT = 16;

/**
 * The longest endpoint URL, in characters (Unicode code points, as the API's JSON Schema counts them), on
 * every surface: the API's route schema says it too, and the dashboard's form reaches only this check.
 */
const MAX_URL_CHARACTERS = 2048;

/** The endpoint URL's length refused in the API's words (its schema's message), or undefined. */
function urlTooLong(url: string): string | undefined {
  // UTF-16 units are never fewer than code points: only a long string needs counting.
  if (url.length <= MAX_URL_CHARACTERS || [...url].length <= MAX_URL_CHARACTERS) return undefined;
  return `url must be at most ${MAX_URL_CHARACTERS} characters`;
}

/** `*` means every type: beside a type it would say two things at once (docs/api.md#webhook-endpoints). */
function starNotAlone(events: readonly string[]): string | undefined {
  if (events.length > 1 && events.includes('*'))
    return 'events must be ["*"] alone, or a list of event types without "*"';
  return undefined;
}

export async function createWebhookEndpoint(
  deps: Deps,
  merchantId: string,
  input: { url: string; events: (EventType | '*')[] },
  answer?: AnswerSpec<WebhookEndpoint>,
): Promise<WebhookEndpoint> {
  const problem =
    urlTooLong(input.url) ??
    starNotAlone(input.events) ??
    (await checkWebhookEndpointUrl('url', input.url, deps.config.serviceEnv));
  if (problem) throw new ServiceError('invalid_request', { message: problem, details: [problem] });
  const endpoint: WebhookEndpoint = {
    id: ids.webhookEndpoint(),
    merchantId,
    url: input.url,
    events: input.events,
    secret: ids.webhookSecret(),
    createdAt: deps.clock.now(),
    disabledAt: null,
    previous: null,
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
  const now = deps.clock.now();
  const revoked = await revokeWebhookEndpoint(deps.db.kysely, merchantId, endpointId, now);
  if (!revoked) throw new ServiceError('webhook_not_found');
  // Its deliveries still waiting are ended now rather than found out one by one when they come due.
  await failPendingDeliveriesTo(deps.db.kysely, endpointId, now);
}

/**
 * Gives the endpoint a new secret, shown once; for ROTATION_GRACE_MS every delivery is signed with both
 * the new secret and the one it replaced (docs/decisions.md#webhook-delivery). A secret replaced earlier
 * and still in its grace period stops signing at once: two secrets sign at most.
 */
export async function rotateWebhookSecret(
  deps: Deps,
  merchantId: string,
  endpointId: string,
  answer?: AnswerSpec<WebhookEndpoint>,
): Promise<WebhookEndpoint> {
  return deps.db.kysely.transaction().execute(async (trx) => {
    const endpoint = await findWebhookEndpoint(trx, deps.db.secrets, merchantId, endpointId);
    if (!endpoint) throw new ServiceError('webhook_not_found');
    const now = deps.clock.now();
    const secret = ids.webhookSecret();
    await rotateWebhookEndpointSecret(trx, deps.db.secrets, endpoint, secret, now + ROTATION_GRACE_MS);
    const rotated: WebhookEndpoint = {
      ...endpoint,
      secret,
      previous: { secret: endpoint.secret, expiresAt: now + ROTATION_GRACE_MS },
    };
    await recordAnswer(trx, answer, rotated);
    return rotated;
  });
}

export const listMerchantWebhookEndpoints = (deps: Deps, merchantId: string): Promise<WebhookEndpoint[]> =>
  listWebhookEndpoints(deps.db.kysely, deps.db.secrets, merchantId);

/**
 * A signed test event (`webhook.test`, docs/api.md#test-events) to one endpoint, through the same delivery
 * path as every event: one delivery at the end of the endpoint URL's queue, sent by the dispatcher, signed
 * with the endpoint's secrets in force, retried on the schedule, its attempts recorded. A disabled
 * endpoint gets no deliveries, so it is refused here rather than queued to fail.
 */
export async function sendTestEvent(
  deps: Deps,
  merchantId: string,
  endpointId: string,
): Promise<TestEventPayload> {
  return deps.db.kysely.transaction().execute(async (trx) => {
    const endpoint = await findWebhookEndpoint(trx, deps.db.secrets, merchantId, endpointId);
    if (!endpoint) throw new ServiceError('webhook_not_found');
    if (endpoint.disabledAt !== null)
      throw new ServiceError('invalid_request', {
        message:
          'This endpoint is disabled (it answered 410 Gone) and gets no deliveries, tests included: add it again to receive events.',
      });
    const now = deps.clock.now();
    const event = await recordTestEvent(trx, endpoint, now);
    await insertDeliveries(
      trx,
      [newDelivery({ id: event.id, merchantId }, { webhookId: endpoint.id, url: endpoint.url }, now)],
      now,
    );
    await deps.db.events.announce(trx);
    return event;
  });
}
