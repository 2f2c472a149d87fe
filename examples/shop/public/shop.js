// The product page's script: builds the cart from the quantities, asks the shop for an order reference,
// and mounts the Group Checkout button (docs/api.md#browser-sdk) with the cart signed by the shop's own
// POST /api/cart/sign. The prices come from the page's settings; the shop checks them again before it signs.
(() => {
  const settings = JSON.parse(document.getElementById('shop-settings').textContent);
  const status = document.getElementById('status');
  const orderRefText = document.getElementById('order-ref');
  const pay = document.getElementById('pay');
  const format = new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: settings.currency.toUpperCase(),
  });
  // Cents to an exact decimal string, then formatted: no float ever holds an amount.
  const money = (cents) => {
    const digits = String(cents).padStart(3, '0');
    return format.format(`${digits.slice(0, -2)}.${digits.slice(-2)}`);
  };
  let orderRef;
  let button;

  const say = (text) => {
    status.textContent = text;
  };

  function quantities() {
    return settings.products.map((product) => {
      const input = document.getElementById(`qty-${product.id}`);
      const value = Number(input.value);
      const ok = Number.isInteger(value) && value >= 0 && value <= settings.maxQuantity;
      input.setAttribute('aria-invalid', ok ? 'false' : 'true');
      return { product, quantity: ok ? value : 0 };
    });
  }

  /** The same arithmetic as the shop's priceCart (src/catalogue.ts): total = items + tax + shipping + fees. */
  function buildCart() {
    const items = quantities()
      .filter((line) => line.quantity > 0)
      .map(({ product, quantity }) => ({
        id: product.id,
        name: product.name,
        quantity,
        unit_price: product.unit_price,
      }));
    const subtotal = items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0);
    const tax = Math.floor((subtotal * settings.taxRateBps + 5000) / 10000);
    const shipping = subtotal >= settings.freeShippingFrom ? 0 : settings.shipping;
    const fees = settings.fees.map((fee) => ({ id: fee.id, label: fee.label, amount: fee.amount }));
    const total = subtotal + tax + shipping + fees.reduce((sum, fee) => sum + fee.amount, 0);
    document.getElementById('sum-subtotal').textContent = money(subtotal);
    document.getElementById('sum-tax').textContent = money(tax);
    document.getElementById('sum-shipping').textContent = money(shipping);
    document.getElementById('sum-fees').textContent = money(fees.reduce((sum, fee) => sum + fee.amount, 0));
    document.getElementById('sum-total').textContent = money(total);
    if (items.length === 0) return undefined;
    return {
      total,
      currency: settings.currency,
      items,
      tax,
      shipping,
      fees,
      metadata: { order_ref: orderRef },
    };
  }

  async function getSignature(cart) {
    const response = await fetch('/api/cart/sign', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cart }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `the shop could not sign the cart (${response.status})`);
    return body.signature;
  }

  /** The cart the button was made for, as JSON: a button is made again only when the cart changes. */
  let shownCart;

  /**
   * A new button for the cart as it is now: a button's cart is fixed when it is made. Called on every
   * `input` event, so the button is ready while the shopper types and is not made again under the
   * pointer when the field loses focus (a `change` listener did that, and the first click was lost).
   */
  function renderButton() {
    const cart = buildCart();
    const key = JSON.stringify(cart ?? null);
    if (key === shownCart) return;
    shownCart = key;
    if (button) button.destroy();
    button = undefined;
    if (!cart) {
      say('Choose at least one product to check out as a group.');
      return;
    }
    const here = window.location.origin;
    try {
      button = window.GroupCheckout.button({
        cart,
        success_url: `${here}/success?order=${encodeURIComponent(orderRef)}`,
        // Back to the product page, which then says what became of the previous order.
        cancel_url: `${here}/?left=${encodeURIComponent(orderRef)}`,
        callbacks: {
          onGroupCreated: (sessionId) =>
            say(
              `Group created${typeof sessionId === 'string' ? ` (session ${sessionId})` : ''}: say who is in the group in the checkout window, and it gives you a link for each person.`,
            ),
          onGroupFunded: (_sessionId, ref) =>
            say(
              `Every share is paid for order ${ref || orderRef}. The order is confirmed when the shop hears from Group Checkout.`,
            ),
          onGroupCancelled: () => say('The group checkout was cancelled; paid shares are refunded.'),
          onGroupExpired: () =>
            say('The group checkout expired before every share was paid; paid shares are refunded.'),
          onError: (error) =>
            say(
              `Group checkout failed: ${error?.message || 'unknown error'}${error?.code ? ` (${error.code})` : ''}${
                error?.code === 'invalid_api_key'
                  ? ". The shop's settings were made for another database than the service's: start both with npm start, which picks the right ones."
                  : ''
              }`,
            ),
        },
      });
      button.mount(pay);
    } catch (error) {
      say(`The group checkout button could not be shown: ${error.message}`);
    }
  }

  async function start() {
    if (!window.GroupCheckout) {
      say(`The Group Checkout script did not load from ${settings.payBaseUrl}: is the service running?`);
      return;
    }
    const response = await fetch('/api/orders', { method: 'POST' });
    if (!response.ok) {
      say('The shop could not start an order; reload the page to try again.');
      return;
    }
    orderRef = (await response.json()).order_ref;
    orderRefText.textContent = orderRef;
    window.GroupCheckout.init({
      merchantId: settings.merchantId,
      publishableKey: settings.publishableKey,
      getSignature,
      apiBaseUrl: settings.apiBaseUrl,
      payBaseUrl: settings.payBaseUrl,
    });
    renderButton();
    const left = new URLSearchParams(window.location.search).get('left');
    if (left) {
      say(
        `You left the group checkout of order ${left}. If the group was cancelled, anyone who paid gets it all back; /orders shows where it stands.`,
      );
    }
    for (const product of settings.products) {
      document.getElementById(`qty-${product.id}`).addEventListener('input', renderButton);
    }
  }

  start().catch((error) => say(`The page could not start the checkout: ${error.message}`));
})();
