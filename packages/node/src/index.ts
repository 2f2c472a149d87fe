// @group-checkout/node: everything a merchant's server needs, one export line per module.
export type { Cart, CartFee, CartItem, CartSerialization } from './cart.ts';
export { canonicalCart, canonicalJson, serializeCart, signCart, verifyCartSignature } from './cart.ts';
export type { ClientOptions, RequestOptions } from './client.ts';
export { GroupCheckout, GroupCheckoutError } from './client.ts';
export type {
  ClosedSession,
  CreatedSession,
  CreatedWebhookEndpoint,
  CreateSessionParams,
  CreateWebhookParams,
  Customer,
  DeletedWebhookEndpoint,
  Delivery,
  DeliveryAttempt,
  Dispute,
  EventData,
  EventType,
  EventWithDeliveries,
  Group,
  GroupConfig,
  ListEventsParams,
  ListParams,
  Member,
  MemberStatus,
  MerchantProfile,
  Page,
  Refund,
  RefundStatus,
  RemindResult,
  RotatedWebhookSecret,
  Session,
  SessionListItem,
  SessionStatus,
  SplitMode,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEvent,
  WithRequestId,
} from './types.ts';
export type { TestHeadersOptions, VerifyOptions, WebhookHeaders } from './webhooks.ts';
export { generateTestHeaders, signWebhook, verifyWebhook, WebhookVerificationError } from './webhooks.ts';
