/** Every webhook event type (docs/api.md#events). */
export const EVENT_TYPES = [
  'group.created',
  'group.share_paid',
  'group.share_failed',
  'group.funded',
  'group.expired',
  'group.cancelled',
  'group.share_refunded',
  'group.share_refund_failed',
  'group.share_disputed',
  'group.share_dispute_closed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The test event the dashboard sends to one endpoint (docs/api.md#test-events): delivered, signed and retried
 * like every event, but it reports no change, so it is not an EventType — no endpoint subscribes to it,
 * and the events API does not list it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
