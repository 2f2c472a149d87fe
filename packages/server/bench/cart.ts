// The request body of the POST benchmarks: a realistic cart (3 items, tax, shipping, one fee, an
// order_ref) signed with the merchant's cart signing secret. autocannon sends it unchanged every time.
import { type Cart, signCart } from '@group-checkout/node';

export function benchCart(): Cart {
  const items = [
    {
      id: 'sku-tee-blue-m',
      name: 'T-shirt, blue, M',
      quantity: 2,
      unit_price: 2500,
      image_url: 'https://shop.example/img/tee-blue.png',
    },
    { id: 'sku-mug-stoneware', name: 'Stoneware mug', quantity: 1, unit_price: 1800 },
    { id: 'sku-cap-black', name: 'Cap, black', quantity: 3, unit_price: 1200 },
  ];
  const tax = 832;
  const shipping = 599;
  const fees = [{ id: 'fee-service', label: 'Service fee', amount: 150 }];
  const subtotal = items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0);
  const total = subtotal + tax + shipping + fees.reduce((sum, fee) => sum + fee.amount, 0);
  return { total, currency: 'usd', items, tax, shipping, fees, metadata: { order_ref: 'bench-order-0001' } };
}

/** The JSON body of POST /v1/sessions (and of the reference server's POST). */
export function sessionBody(signingSecret: string, extra: Record<string, unknown> = {}): string {
  const cart = benchCart();
  return JSON.stringify({ cart, signature: signCart(cart, signingSecret), ...extra });
}
