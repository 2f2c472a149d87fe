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
