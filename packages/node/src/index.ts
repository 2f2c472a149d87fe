// @group-checkout/node: everything a merchant's server needs, one export line per module.
export type { Cart, CartFee, CartItem } from './cart.ts';
export { canonicalCart, signCart, verifyCartSignature } from './cart.ts';
