// POST {pay_url}/api/v1/shares/{shareId}/pay — a member pays their share: share + consumer fee, charged
// at once or held until the group is complete (docs/api.md#payments). The card travels in this request
// only: it is never stored or logged.
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { CART_LIMITS } from '../../domain/cart.ts';
import { ServiceError } from '../../errors.ts';
import { loadShareToPay } from '../../flows/pay-access.ts';
import { type PaidShare, payShare } from '../../flows/payments.ts';
import { shareToWire } from '../../wire/mappers.ts';
import { withAnswer } from '../idempotency.ts';
import { rateLimitConfig } from '../schemas.ts';

const CardSchema = Type.Object(
  {
    number: Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'The card number; spaces and dashes are allowed.',
    }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 0, maximum: 9999, description: 'Four digits (two are read as 20YY).' }),
    cvc: Type.String({ minLength: 1, maxLength: 8 }),
  },
  { additionalProperties: false },
);

const PayBody = Type.Object(
  {
    card: Type.Optional(CardSchema),
    payment_method: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'With Stripe: the PaymentMethod id made by Stripe.js.',
      }),
    ),
    expected_amount_due_cents: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2 * CART_LIMITS.maxTotal,
        description: 'What the payer was shown; when the share now costs another amount: 409 amount_changed.',
      }),
    ),
  },
  { additionalProperties: false },
);

export function register(app: App, deps: Deps) {
  app.post(
    '/shares/:shareId/pay',
    {
      schema: {
        hide: true,
        params: Type.Object({ shareId: Type.String() }),
        body: PayBody,
      },
      config: rateLimitConfig(deps, 'PAY_WRITE'),
    },
    async (request) => {
      const { card, payment_method: paymentMethod, expected_amount_due_cents: expected } = request.body;
      if ((card === undefined) === (paymentMethod === undefined)) {
        throw new ServiceError('invalid_request', {
          message:
            'Send either card (in the sandbox) or payment_method (with Stripe), not both and not neither.',
        });
      }
      const source = card
        ? { card: { number: card.number, expMonth: card.exp_month, expYear: card.exp_year, cvc: card.cvc } }
        : { paymentMethod: paymentMethod as string };
      // The share is read first: an unknown share is 404 before anything else, and the merchant's name
      // is at hand for the answer, which is rendered inside the payment's transaction.
      const { member, merchantName } = await loadShareToPay(deps, request.params.shareId);
      const toWire = (paid: PaidShare) =>
        shareToWire(paid.session, paid.member, merchantName, [paid.attempt], paid.progress);
      return withAnswer(request, toWire, (answer) => payShare(deps, member, source, answer, expected));
    },
  );
}
