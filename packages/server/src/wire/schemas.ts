// The wire shapes of our resources as TypeBox schemas: one source for request validation, the
// OpenAPI document and the TypeScript types (Static<typeof …>), exported as
// `@group-checkout/server/wire` so the Node client and the browser SDK can share them. Field names are
// snake_case as the API has them (docs/api.md); mappers.ts turns our objects into these shapes. Every
// answer also carries request_id, which the API adds (api/schemas.ts withRequestId).
import Type from 'typebox';
import { CART_LIMITS } from '../domain/cart.ts';
import { EVENT_TYPES, type EventType } from '../domain/event-types.ts';
import { CAPTURE_MODES, GROUP_LIMITS } from '../domain/group-config.ts';
import { SPLIT_MODES, type SplitMode } from '../domain/split.ts';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' });

/**
 * Names of people (customers, members): no control characters at all (line breaks, NUL, tabs), no
 * bidirectional overrides or isolates, no unpaired surrogates. Names reach mail and pages, where such
 * characters forge lines or reorder text (docs/api.md#plain-text).
 */
export const PLAIN_TEXT_PATTERN =
  '^[^\\p{Cc}\\p{Cs}\\u2028\\u2029\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]*$';

/**
 * Cart text (item names, fee labels) comes from the merchant's catalogue and is signed as sent, so line
 * breaks and tabs stay allowed; NUL and the other control characters, bidirectional overrides and
 * unpaired surrogates are refused as in names.
 */
export const CART_TEXT_PATTERN =
  '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\p{Cs}\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]*$';

/** A string of at most maxLength characters matching `pattern`, and at least one when `required`. */
const Text =
  (pattern: string) =>
  (maxLength: number, options: { required?: boolean; description?: string } = {}) =>
    Type.String({
      maxLength,
      pattern,
      ...(options.required ? { minLength: 1 } : {}),
      ...(options.description ? { description: options.description } : {}),
    });

/** A person's name or contact (PLAIN_TEXT_PATTERN). */
export const PlainText = Text(PLAIN_TEXT_PATTERN);
const CartText = Text(CART_TEXT_PATTERN);

const Str = (description?: string) =>
  Type.String({ maxLength: CART_LIMITS.maxStringLength, ...(description ? { description } : {}) });
const Amount = (description = 'Smallest currency unit.') =>
  Type.Integer({ minimum: 0, maximum: CART_LIMITS.maxTotal, description });

// Cart (docs/api.md#cart). The schema holds every rule a schema can say; domain/cart.ts checks the rest
// (the ISO 4217 code, https images, metadata keys, the total adding up), so each rule lives once.
export const CartItemSchema = Type.Object(
  {
    id: Type.Optional(
      CartText(CART_LIMITS.maxStringLength, {
        description: 'Merchant SKU or line id; items are sorted by it for the signature.',
      }),
    ),
    name: CartText(CART_LIMITS.maxStringLength, { required: true }),
    quantity: Type.Integer({ minimum: 1, maximum: CART_LIMITS.maxQuantity }),
    unit_price: Amount(),
    image_url: Type.Optional(Str('HTTPS thumbnail; not signed.')),
  },
  { additionalProperties: false },
);

export const CartFeeSchema = Type.Object(
  {
    id: CartText(CART_LIMITS.maxStringLength, { required: true }),
    label: CartText(CART_LIMITS.maxStringLength, { required: true, description: 'Display text.' }),
    amount: Amount(),
  },
  { additionalProperties: false },
);

export const CartSchema = Type.Object(
  {
    total: Type.Integer({
      minimum: CART_LIMITS.minTotal,
      maximum: CART_LIMITS.maxTotal,
      description: 'Smallest currency unit: the items, tax, shipping and fees added up.',
    }),
    currency: Str('Exactly 3 characters: a lowercase ISO 4217 code, like usd.'),
    items: Type.Array(CartItemSchema, { minItems: 1, maxItems: CART_LIMITS.maxItems }),
    tax: Type.Optional(Amount()),
    shipping: Type.Optional(Amount()),
    fees: Type.Optional(Type.Array(CartFeeSchema, { maxItems: CART_LIMITS.maxFees })),
    // order_ref reaches mail and pages as a name does, so it is plain text; other values are cart text.
    metadata: Type.Optional(
      Type.Unsafe<Record<string, string>>(
        Type.Object(
          { order_ref: Type.Optional(PlainText(CART_LIMITS.maxStringLength)) },
          {
            additionalProperties: CartText(CART_LIMITS.maxStringLength),
            maxProperties: CART_LIMITS.maxMetadataKeys,
            description: 'String values; order_ref carries the merchant order id.',
          },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

export const SplitModeSchema = Type.Unsafe<SplitMode>(
  Type.String({ enum: [...SPLIT_MODES], description: 'equal, itemized, custom, percentage or host-pays.' }),
);

export const GroupConfigSchema = Type.Object(
  {
    min_size: Type.Optional(Type.Integer({ description: 'Minimum group size (default 2).' })),
    max_size: Type.Optional(
      Type.Integer({ description: `Maximum group size (default 10, at most ${GROUP_LIMITS.maxSize}).` }),
    ),
    default_mode: Type.Optional(Type.String({ enum: [...SPLIT_MODES] })),
    allowed_modes: Type.Optional(
      Type.Array(Type.String({ enum: [...SPLIT_MODES] }), { minItems: 1, maxItems: SPLIT_MODES.length }),
    ),
    expiry_hours: Type.Optional(
      Type.Integer({
        description: 'Hours until expiry, 1 to 168 (default 48); at most 144 with capture on_funded.',
      }),
    ),
    capture: Type.Optional(
      Type.String({
        enum: [...CAPTURE_MODES],
        description:
          'immediate (default): a share is charged when paid; on_funded: holds, captured when every share is authorized.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CustomerSchema = Type.Object(
  {
    name: Type.Optional(PlainText(GROUP_LIMITS.maxNameLength, { required: true })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: GROUP_LIMITS.maxEmailLength })),
    phone: Type.Optional(PlainText(40)),
  },
  { additionalProperties: false },
);

export const MemberSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  amount_cents: Type.Integer(),
  status: Type.String({ description: 'pending, authenticating, authorized, paid, refunded or released.' }),
});

/** A member as the hosted pages show them to a member of the group. */
export const PageMemberSchema = Type.Object({ ...MemberSchema.properties, is_organizer: Type.Boolean() });

/** A member as the organizer's page sees them: with their contact and their share link. */
export const OrganizerMemberSchema = Type.Intersect([
  PageMemberSchema,
  Type.Object({
    email: Type.Union([Type.String(), Type.Null()]),
    basis_points: Type.Union([Type.Integer(), Type.Null()]),
    items: Type.Union([
      Type.Array(Type.Object({ item_index: Type.Integer(), quantity: Type.Integer() })),
      Type.Null(),
    ]),
    share_id: Type.String(),
    share_url: Type.String(),
    amount_due_cents: Type.Integer({ description: 'Share plus the consumer fee.' }),
  }),
]);

const RefundSchema = Type.Object({
  id: Type.Union([Type.String(), Type.Null()], { description: 'The processor’s refund id once known.' }),
  member_id: Type.String(),
  amount_cents: Type.Integer({ description: 'All the member was charged: share plus consumer fee.' }),
  status: Type.String({
    description:
      'pending, succeeded or failed. A refund refused when asked is tried again until it succeeds; one the processor took and later reported failed (the card was closed) waits for an operator (docs/operations.md).',
  }),
  failure_reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a failed refund failed, as the processor said it (expired_or_canceled_card, …).',
  }),
});

/** A dispute (chargeback) a payer opened with their bank on their share's payment. */
export const DisputeSchema = Type.Object({
  id: Type.String({ description: 'The processor’s dispute id (dp_…, du_…).' }),
  member_id: Type.String(),
  amount_cents: Type.Integer({ description: 'What the bank holds back while it decides.' }),
  reason: Type.String({ description: 'The bank’s reason, as the processor says it (fraudulent, …).' }),
  status: Type.Union([Type.Literal('needs_response'), Type.Literal('won'), Type.Literal('lost')]),
});

export const GroupSchema = Type.Object({
  id: Type.String(),
  size: Type.Integer(),
  mode: Type.String(),
  paid_amount: Type.Integer(),
  pending_amount: Type.Integer(),
  members: Type.Array(MemberSchema),
});

export const SessionDetailSchema = Type.Object({
  session_id: Type.String(),
  status: Type.String({ description: 'pending, funded, cancelled or expired.' }),
  created_at: Timestamp,
  expires_at: Timestamp,
  order_ref: Type.Union([Type.String(), Type.Null()]),
  currency: Type.String(),
  total_cents: Type.Integer(),
  group: GroupSchema,
  charges: Type.Array(Type.String(), { description: 'Processor charge ids of paid shares.' }),
  transfer: Type.Union([Type.String(), Type.Null()], { description: 'Processor transfer id once funded.' }),
  disputes: Type.Array(DisputeSchema, {
    description: 'Disputes (chargebacks) on members’ payments, oldest first.',
  }),
  refunds: Type.Array(RefundSchema, {
    description: 'Cancelled or expired: one per paid share, with the state of its refund.',
  }),
  customer: Type.Optional(CustomerSchema),
});

export const CreatedSessionSchema = Type.Object({
  session_id: Type.String(),
  session_url: Type.String({ description: 'The organizer’s hosted page, with its access token.' }),
  status: Type.String(),
  expires_at: Timestamp,
  merchant_fee_rate: Type.Number(),
  consumer_fee_rate: Type.Number(),
  group_access_token: Type.String({ description: 'Lets members view the session and join an equal group.' }),
});

export const SessionListItemSchema = Type.Object({
  session_id: Type.String(),
  status: Type.String(),
  order_ref: Type.Union([Type.String(), Type.Null()]),
  total_cents: Type.Integer(),
  currency: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
});

export const ClosedSessionSchema = Type.Object({
  session_id: Type.String(),
  status: Type.String(),
  refunds: Type.Array(RefundSchema, { description: 'One per paid share, refunded through the processor.' }),
});

export const WebhookEndpointSchema = Type.Object({
  id: Type.String({ description: 'Endpoint id (we_…).' }),
  url: Type.String({ format: 'uri' }),
  events: Type.Array(Type.String()),
  created_at: Timestamp,
  disabled_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When a 410 answer disabled the endpoint; null while it is enabled.',
  }),
});

const CartViewSchema = Type.Object({
  items: Type.Array(CartItemSchema),
  tax: Type.Integer(),
  shipping: Type.Integer(),
  fees: Type.Array(CartFeeSchema),
});

/** One member's share as the payer's page shows it (GET {pay_url}/api/v1/shares/{shareId}). */
export const ShareSchema = Type.Object({
  share_id: Type.String(),
  session_status: Type.String(),
  merchant_name: Type.String(),
  order_ref: Type.Union([Type.String(), Type.Null()]),
  currency: Type.String(),
  expires_at: Timestamp,
  member: MemberSchema,
  status: Type.String({
    description: 'The share’s status: pending, authenticating, authorized, paid, refunded or released.',
  }),
  next_action: Type.Union(
    [
      Type.Object({
        type: Type.Literal('authenticate'),
        client_secret: Type.String({
          description:
            'Hand it to Stripe.js handleNextAction (with Stripe) or to POST /sandbox/authenticate (sandbox), then call POST /shares/{shareId}/refresh.',
        }),
      }),
      Type.Null(),
    ],
    { description: 'While the share is authenticating: what the payer’s page must do (3-D Secure).' },
  ),
  amount_cents: Type.Integer({ description: 'The share, without the consumer fee.' }),
  consumer_fee_rate: Type.Number({
    description: 'The service fee the payer adds to their share, as a fraction (0.01 is 1 %).',
  }),
  consumer_fee_cents: Type.Integer(),
  amount_due_cents: Type.Integer({ description: 'Share plus the consumer fee: what the card is charged.' }),
  capture: Type.String({
    description: 'immediate: the card is charged; on_funded: a hold, captured when the group is complete.',
  }),
  failure: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last payment of this share failed (a hold declined at capture), for the payer.',
  }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why, as a code: a decline code (insufficient_funds, …), capture_declined, authentication_failed, authentication_abandoned or refund_failed.',
  }),
  payment: Type.Union([
    Type.Object({
      id: Type.Union([Type.String(), Type.Null()], { description: 'The processor’s charge or hold id.' }),
      kind: Type.String({ description: 'charge or authorize (a hold).' }),
      amount_cents: Type.Integer({
        description: 'What the card was charged or held: share plus consumer fee.',
      }),
      card_brand: Type.Union([Type.String(), Type.Null()]),
      card_last4: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  cart: CartViewSchema,
  split: Type.Object(
    {
      mode: Type.String({
        description: 'How the group splits the cart: equal, itemized, custom, percentage or host-pays.',
      }),
      items: Type.Union(
        [Type.Array(Type.Object({ item_index: Type.Integer(), quantity: Type.Integer() })), Type.Null()],
        {
          description:
            'Itemized: the cart items (by index in cart.items) and quantities this share pays for.',
        },
      ),
      basis_points: Type.Union([Type.Integer(), Type.Null()], {
        description: 'Percentage: this share’s part of the total in basis points (2500 is 25 %).',
      }),
    },
    { description: 'What this share is of the cart, so the payer sees why they pay this amount.' },
  ),
  group: Type.Optional(
    Type.Object(
      {
        size: Type.Integer({ description: 'Members in the group.' }),
        paid_count: Type.Integer({ description: 'Members whose share is paid or held.' }),
        total_cents: Type.Integer(),
        paid_amount: Type.Integer(),
        pending_amount: Type.Integer(),
      },
      { description: 'How far the group is (GET /shares/{shareId} only); not who the others are.' },
    ),
  ),
});

/** The session as the hosted pages show it (GET {pay_url}/api/v1/session). */
export const PayPageSchema = Type.Object({
  role: Type.Union([Type.Literal('organizer'), Type.Literal('member')]),
  session_id: Type.String(),
  status: Type.String(),
  merchant_name: Type.String(),
  order_ref: Type.Union([Type.String(), Type.Null()]),
  currency: Type.String(),
  total_cents: Type.Integer(),
  consumer_fee_rate: Type.Number(),
  expires_at: Timestamp,
  capture: Type.String({ description: "The session's capture mode: immediate or on_funded." }),
  cart: CartViewSchema,
  group: Type.Object({
    id: Type.String(),
    size: Type.Integer(),
    mode: Type.String(),
    paid_amount: Type.Integer(),
    pending_amount: Type.Integer(),
    set_up: Type.Boolean(),
    min_size: Type.Integer(),
    max_size: Type.Integer(),
    allowed_modes: Type.Array(Type.String()),
    members: Type.Array(Type.Union([OrganizerMemberSchema, PageMemberSchema])),
  }),
  join_url: Type.Optional(Type.String()),
  success_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  cancel_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** A webhook event as delivered and as the events API shows it (docs/api.md#events). */
export const EventSchema = Type.Object({
  id: Type.String({ description: 'evt_…; the webhook-id header of every delivery attempt.' }),
  type: Type.Unsafe<EventType>(Type.String({ enum: [...EVENT_TYPES] })),
  timestamp: Timestamp,
  data: Type.Object({
    session_id: Type.String(),
    order_ref: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    total_cents: Type.Integer(),
    currency: Type.String(),
    paid_amount: Type.Integer(),
    pending_amount: Type.Integer(),
    charges: Type.Array(Type.String()),
    member: Type.Optional(MemberSchema),
    transfer: Type.Optional(
      Type.String({
        description:
          'Not sent by this version: the transfer follows group.funded, and shows as transfer on GET /sessions/{id} once made.',
      }),
    ),
    refund: Type.Optional(RefundSchema),
    dispute: Type.Optional(DisputeSchema),
  }),
});

/** One attempt of a delivery. */
const DeliveryAttemptSchema = Type.Object({
  at: Timestamp,
  status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The receiver’s HTTP status; null when no answer came.',
  }),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'What went wrong; null on a 2xx answer.' }),
});

/** An event's delivery to one target, with every attempt (docs/api.md#events-api). */
export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'dlv_…' }),
  webhook_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The endpoint delivered to; null for the session’s webhook_url.',
  }),
  url: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Array(DeliveryAttemptSchema),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the next attempt is due; null once delivered or failed.',
  }),
  created_at: Timestamp,
});

export const EventDetailSchema = Type.Object({
  ...EventSchema.properties,
  deliveries: Type.Array(DeliverySchema),
});
