// @group-checkout/node: everything a merchant's server needs, one export line per module.
export type { Cart, CartFee, CartItem, CartSerialization } from './cart.ts';
export { canonicalCart, canonicalJson, serializeCart, signCart, verifyCartSignature } from './cart.ts';
export type { VerifyOptions, WebhookHeaders } from './webhooks.ts';
export { generateTestHeaders, verifyWebhook, WebhookVerificationError } from './webhooks.ts';
