// The shop's pages, rendered on the server so that they read before any script runs. The product page's
// script (public/shop.js) takes its settings from a JSON block, not from inline code, so the CSP needs no
// 'unsafe-inline' for scripts.
import {
  CURRENCY,
  FEES,
  FREE_SHIPPING_FROM,
  MAX_QUANTITY,
  PRODUCTS,
  priceCart,
  SHIPPING,
  TAX_RATE_BPS,
} from './catalogue.ts';
import type { Order } from './orders.ts';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const money = (cents: number, currency = CURRENCY): string =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);

const SHOP_NAME = 'Camp Supply';

function layout(title: string, current: 'shop' | 'orders' | 'none', body: string, head = ''): string {
  const nav = (href: string, label: string, key: typeof current) =>
    `<a href="${href}"${current === key ? ' aria-current="page"' : ''}>${label}</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${SHOP_NAME}</title>
<link rel="stylesheet" href="/shop.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${head}</head>
<body>
<header class="site">
<a class="brand" href="/">${SHOP_NAME}</a>
<nav aria-label="Shop">${nav('/', 'Shop', 'shop')} ${nav('/orders', 'Orders', 'orders')}</nav>
</header>
<main id="main">
${body}
</main>
<footer class="site"><p>A demo merchant for Group Checkout, in the sandbox: no real money moves.</p></footer>
</body>
</html>
`;
}

/** What public/shop.js needs: the merchant's browser credentials, the service's URLs and the prices. */
export interface PageSettings {
  merchantId: string;
  publishableKey: string;
  apiBaseUrl: string;
  payBaseUrl: string;
}

/** The JSON block's text: `<` escaped so that no `</script>` can end the block early. */
const jsonForScript = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const FIRST_LINES = [{ id: 'sku_tent', quantity: 1 }];

export function productPage(settings: PageSettings): string {
  const cart = priceCart(FIRST_LINES, '');
  const quantityOf = (id: string) => FIRST_LINES.find((line) => line.id === id)?.quantity ?? 0;
  const products = PRODUCTS.map(
    (p) => `<li class="product">
<h3 id="name-${p.id}">${escapeHtml(p.name)}</h3>
<p>${escapeHtml(p.description)}</p>
<p class="price">${money(p.unit_price)} <span class="each">each</span></p>
<label for="qty-${p.id}">Quantity<span class="visually-hidden"> of ${escapeHtml(p.name)}</span></label>
<input id="qty-${p.id}" name="${p.id}" type="number" inputmode="numeric" min="0" max="${MAX_QUANTITY}" step="1" value="${quantityOf(p.id)}">
</li>`,
  ).join('\n');
  const fee = FEES[0];
  const subtotal = cart.items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0);
  const shopSettings = {
    ...settings,
    currency: CURRENCY,
    products: PRODUCTS.map(({ id, name, unit_price }) => ({ id, name, unit_price })),
    taxRateBps: TAX_RATE_BPS,
    shipping: SHIPPING,
    freeShippingFrom: FREE_SHIPPING_FROM,
    fees: FEES,
    maxQuantity: MAX_QUANTITY,
  };
  const body = `<h1>Gear for the group trip</h1>
<p>Choose what the group needs. One of you starts a group checkout, and everyone pays their share.</p>
<section aria-labelledby="products-heading">
<h2 id="products-heading">Products</h2>
<ul class="products">
${products}
</ul>
</section>
<section aria-labelledby="order-heading">
<h2 id="order-heading">Your order</h2>
<dl class="summary">
<div><dt>Items</dt><dd id="sum-subtotal">${money(subtotal)}</dd></div>
<div><dt>Tax (${TAX_RATE_BPS / 100}%)</dt><dd id="sum-tax">${money(cart.tax ?? 0)}</dd></div>
<div><dt>Shipping <span class="note">(free from ${money(FREE_SHIPPING_FROM)})</span></dt><dd id="sum-shipping">${money(cart.shipping ?? 0)}</dd></div>
<div><dt>${escapeHtml(fee?.label ?? 'Fees')}</dt><dd id="sum-fees">${money(fee?.amount ?? 0)}</dd></div>
<div class="total"><dt>Total</dt><dd id="sum-total">${money(cart.total)}</dd></div>
</dl>
<p>Order reference: <span id="order-ref">assigned when the page has loaded</span></p>
<div id="pay" class="pay"></div>
<p id="status" class="status" role="status"></p>
<noscript><p>The group checkout button needs JavaScript.</p></noscript>
</section>
<script type="application/json" id="shop-settings">${jsonForScript(shopSettings)}</script>`;
  const head = `<script src="${escapeHtml(settings.payBaseUrl)}/sdk/v1/group-checkout.js" defer></script>
<script src="/shop.js" defer></script>
`;
  return layout('Shop', 'shop', body, head);
}

const STATUS_TEXT: Record<Order['status'], string> = {
  open: 'not checked out',
  pending: 'pending',
  paid: 'paid',
  cancelled: 'cancelled',
  review: 'paid, amount to check',
};

const statusBadge = (status: Order['status']) =>
  `<span class="badge badge-${status}">${STATUS_TEXT[status]}</span>`;

export function successPage(order: Order | undefined, ref: string): string {
  if (!order) {
    return layout(
      'Order not found',
      'none',
      `<h1>Order not found</h1><p>This shop has no order ${escapeHtml(ref || '(none given)')}.</p><p><a href="/">Back to the shop</a></p>`,
    );
  }
  const said: Record<Order['status'], string> = {
    paid: 'Your group has paid in full: the order is confirmed and will ship soon.',
    pending:
      'Thank you! The order is confirmed when Group Checkout tells this shop (by a signed webhook) that every share is paid.',
    cancelled: 'This order was cancelled: every share that was paid is refunded.',
    review:
      'Your group has paid, but not the amount of the cart the shop priced last: the shop checks it before shipping.',
    open: 'This order has not been checked out yet.',
  };
  const again =
    order.status === 'pending'
      ? `<p><a href="/success?order=${encodeURIComponent(order.ref)}">Check the order again</a></p>`
      : '';
  return layout(
    order.status === 'paid' ? 'Order confirmed' : 'Order status',
    'none',
    `<h1>${order.status === 'paid' ? 'Order confirmed' : 'Order status'}</h1>
<p>${said[order.status]}</p>
<dl class="summary">
<div><dt>Order</dt><dd>${escapeHtml(order.ref)}</dd></div>
<div><dt>Total</dt><dd>${money(order.total, order.currency)}</dd></div>
<div><dt>Status</dt><dd>${statusBadge(order.status)}</dd></div>
</dl>
${again}<p><a href="/orders">All orders</a> · <a href="/">Back to the shop</a></p>`,
  );
}

export function ordersPage(orders: Order[]): string {
  const rows = orders
    .map(
      (o) =>
        `<tr><th scope="row">${escapeHtml(o.ref)}</th><td>${money(o.total, o.currency)}</td><td>${statusBadge(o.status)}</td><td class="session">${o.session_id ? escapeHtml(o.session_id) : '<span class="note">not yet</span>'}</td></tr>`,
    )
    .join('\n');
  const table = orders.length
    ? `<div class="table-wrap" role="region" aria-labelledby="orders-caption" tabindex="0">
<table>
<caption id="orders-caption">Orders that went to checkout, newest first</caption>
<thead><tr><th scope="col">Order</th><th scope="col">Total</th><th scope="col">Status</th><th scope="col">Session</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>`
    : '<p>No orders yet: <a href="/">start one in the shop</a>.</p>';
  return layout(
    'Orders',
    'orders',
    `<h1>Orders</h1>
<p>An order is paid when the <code>group.funded</code> webhook arrives, and cancelled on <code>group.cancelled</code> or <code>group.expired</code>.</p>
${table}`,
  );
}

export function notFoundPage(): string {
  return layout('Not found', 'none', '<h1>Not found</h1><p><a href="/">Back to the shop</a></p>');
}
