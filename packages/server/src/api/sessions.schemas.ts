// Wire schemas of sessions (SPEC.md §2), shared by the session routes and the pay-page API.
import Type from 'typebox';
import { CART_LIMITS } from '../domain/cart.ts';
import { SPLIT_MODES } from '../domain/split.ts';
import { RequestId, Timestamp } from './schemas.ts';

const Str = (description?: string) => Type.String({ maxLength: CART_LIMITS.maxStringLength, description });
const Amount = (description: string) =>
  Type.Integer({ minimum: 0, maximum: CART_LIMITS.maxTotal, description });

export const CartItemSchema = Type.Object(
  {
    id: Type.Optional(Str('Merchant SKU or line id; items are sorted by it for the signature.')),
    name: Type.String({ minLength: 1, maxLength: CART_LIMITS.maxStringLength }),
    quantity: Type.Integer({ minimum: 1, maximum: 10_000 }),
    unit_price: Amount('Smallest currency unit.'),
    image_url: Type.Optional(Type.String({ maxLength: 2048, description: 'HTTPS thumbnail; not signed.' })),
  },
  { additionalProperties: false },
);

export const CartFeeSchema = Type.Object(
  { id: Str(), label: Str('Display text.'), amount: Amount('Smallest currency unit.') },
  { additionalProperties: false },
);

export const CartSchema = Type.Object(
  {
    total: Type.Integer({
      minimum: 1,
      maximum: CART_LIMITS.maxTotal,
      description: 'Smallest currency unit.',
    }),
    // The code itself is checked by checkCart, whose message says what was sent and what is expected.
    currency: Type.String({ minLength: 3, maxLength: 3, description: 'Lowercase ISO 4217, like usd.' }),
    items: Type.Array(CartItemSchema, { minItems: 1, maxItems: CART_LIMITS.maxItems }),
    tax: Type.Optional(Amount('Smallest currency unit.')),
    shipping: Type.Optional(Amount('Smallest currency unit.')),
    fees: Type.Optional(Type.Array(CartFeeSchema, { maxItems: CART_LIMITS.maxFees })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'String values; order_ref carries the merchant order id.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SplitModeSchema = Type.Union(
  SPLIT_MODES.map((m) => Type.Literal(m)),
  { description: 'equal, itemized, custom, percentage or host-pays.' },
);

export const GroupConfigSchema = Type.Object(
  {
    min_size: Type.Optional(Type.Integer({ description: 'Minimum group size (default 2).' })),
    max_size: Type.Optional(Type.Integer({ description: 'Maximum group size (default 10, at most 50).' })),
    default_mode: Type.Optional(Type.String({ enum: [...SPLIT_MODES] })),
    allowed_modes: Type.Optional(
      Type.Array(Type.String({ enum: [...SPLIT_MODES] }), { minItems: 1, maxItems: 5 }),
    ),
    expiry_hours: Type.Optional(Type.Integer({ description: 'Hours until expiry, 1 to 168 (default 48).' })),
  },
  { additionalProperties: false },
);

export const CustomerSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);

export const MemberSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  amount_cents: Type.Integer(),
  status: Type.String({ description: 'pending, paid or refunded.' }),
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
  request_id: RequestId,
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
  customer: Type.Optional(CustomerSchema),
});
