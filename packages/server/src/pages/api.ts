// The pay-page API (DESIGN.md §10), under {pay_url}/api/v1: what the hosted pages call, documented for
// custom payer UIs. It is authorized by a token in the URL (the organizer's access token or the group
// access token) or by a share id, never by an API key.
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../api/errors.ts';
import { idempotency } from '../api/idempotency.ts';
import { RequestId, rateLimitConfig, Timestamp } from '../api/schemas.ts';
import { CartSchema, MemberSchema, SplitModeSchema } from '../api/sessions.schemas.ts';
import { closedToWire, groupToWire, memberToWire } from '../api/sessions.wire.ts';
import type { App } from '../app.ts';
import { toIso } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { chargeAmount, consumerFee } from '../domain/fees.ts';
import { formatRate } from '../domain/money.ts';
import { joinGroup, setUpGroup } from '../flows/group.ts';
import { closeSession, sessionUrl, shareUrl } from '../flows/sessions.ts';
import { sha256 } from '../ids.ts';
import { findMerchantById } from '../store/merchants.ts';
import {
  findMemberByShareId,
  findSessionByGroupToken,
  findSessionById,
  findSessionByOrganizerTokenHash,
  listMembers,
  type Member,
  type Session,
} from '../store/sessions.ts';

type Role = 'organizer' | 'member';

const AccessQuery = Type.Object(
  { access: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

async function sessionForToken(deps: Deps, token: string): Promise<{ session: Session; role: Role }> {
  const db = deps.db.kysely;
  if (token.startsWith('at_')) {
    const session = await findSessionByOrganizerTokenHash(db, sha256(token));
    if (session) return { session, role: 'organizer' };
  } else if (token.startsWith('gat_')) {
    const session = await findSessionByGroupToken(db, token);
    if (session) return { session, role: 'member' };
  }
  throw new ApiError('invalid_access_token');
}

async function organizerSession(deps: Deps, token: string): Promise<Session> {
  const { session, role } = await sessionForToken(deps, token);
  if (role !== 'organizer') throw new ApiError('organizer_only');
  return session;
}

const cartView = (session: Session) => {
  const { items, tax, shipping, fees } = session.cart;
  return { items, tax: tax ?? 0, shipping: shipping ?? 0, fees: fees ?? [] };
};

function memberView(deps: Deps, session: Session, m: Member, role: Role) {
  const base = { ...memberToWire(m), is_organizer: m.isOrganizer };
  if (role !== 'organizer') return base;
  return {
    ...base,
    email: m.email,
    basis_points: m.basisPoints,
    items: m.items?.map((i) => ({ item_index: i.itemIndex, quantity: i.quantity })) ?? null,
    share_id: m.shareId,
    share_url: shareUrl(deps, m.shareId),
    amount_due_cents: chargeAmount(m.amountCents, session.consumerFeePpm),
  };
}

async function pageView(deps: Deps, session: Session, members: Member[], role: Role) {
  const merchant = await findMerchantById(deps.db.kysely, session.merchantId);
  const cfg = session.groupConfig;
  return {
    role,
    session_id: session.id,
    status: session.status,
    merchant_name: merchant?.name ?? '',
    order_ref: session.orderRef,
    currency: session.currency,
    total_cents: session.totalCents,
    consumer_fee_rate: formatRate(session.consumerFeePpm),
    expires_at: toIso(session.expiresAt),
    cart: cartView(session),
    group: {
      ...groupToWire(session, members),
      set_up: session.groupSetUpAt !== null,
      min_size: cfg.minSize,
      max_size: cfg.maxSize,
      allowed_modes: cfg.allowedModes,
      members: members.map((m) => memberView(deps, session, m, role)),
    },
    ...(role === 'organizer'
      ? {
          join_url: sessionUrl(deps, session.id, session.groupToken),
          success_url: session.successUrl,
          cancel_url: session.cancelUrl,
        }
      : {}),
  };
}

const MemberInputSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({ maxLength: 64, description: 'An existing member, to keep their share link.' }),
    ),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    amount_cents: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999 })),
    basis_points: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    items: Type.Optional(
      Type.Array(
        Type.Object(
          {
            item_index: Type.Integer({ minimum: 0, maximum: 99 }),
            quantity: Type.Integer({ minimum: 0, maximum: 10_000 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);

const GroupBody = Type.Object(
  { mode: SplitModeSchema, members: Type.Array(MemberInputSchema, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false },
);

const JoinBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  },
  { additionalProperties: false },
);

const ShareView = Type.Object({
  request_id: RequestId,
  share_id: Type.String(),
  session_id: Type.String(),
  session_status: Type.String(),
  merchant_name: Type.String(),
  order_ref: Type.Union([Type.String(), Type.Null()]),
  currency: Type.String(),
  expires_at: Timestamp,
  member: MemberSchema,
  consumer_fee_cents: Type.Integer(),
  amount_due_cents: Type.Integer({ description: 'Share plus the consumer fee: what the card is charged.' }),
  cart: Type.Object({
    items: Type.Array(CartSchema.properties.items.items),
    tax: Type.Integer(),
    shipping: Type.Integer(),
    fees: Type.Array(Type.Object({ id: Type.String(), label: Type.String(), amount: Type.Integer() })),
  }),
});

/** Idempotency scope of a pay-page request: the credential that authorized it. */
const payScope = (request: FastifyRequest) => {
  const query = request.query as { access?: string };
  const params = request.params as { shareId?: string };
  return `pay:${sha256(query.access ?? params.shareId ?? '')}`;
};

export function registerPayApi(app: App, deps: Deps) {
  const base = `${deps.config.payPrefix}/api/v1`;
  const idempotent = idempotency(deps, payScope) as preHandlerHookHandler;
  const read = rateLimitConfig(deps, 'PAY_READ');
  const write = rateLimitConfig(deps, 'PAY_WRITE');
  // Custom payer UIs may live on any origin; credentials travel in the URL, never in cookies.
  const cors = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', 'X-Request-Id, Retry-After');
  };
  const hide = { hide: true };

  app.options(`${base}/*`, { schema: hide }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS')
      .header('access-control-allow-headers', 'Content-Type, Idempotency-Key')
      .header('access-control-max-age', '600')
      .send(),
  );

  app.get(
    `${base}/session`,
    { schema: { ...hide, querystring: AccessQuery }, config: read, onRequest: cors },
    async (request) => {
      const { session, role } = await sessionForToken(deps, request.query.access);
      const members = await listMembers(deps.db.kysely, session.id);
      return { request_id: request.id, ...(await pageView(deps, session, members, role)) };
    },
  );

  app.put(
    `${base}/session/group`,
    { schema: { ...hide, querystring: AccessQuery, body: GroupBody }, config: write, onRequest: cors },
    async (request) => {
      const session = await organizerSession(deps, request.query.access);
      const result = await setUpGroup(deps, session, request.body.mode, request.body.members);
      return {
        request_id: request.id,
        ...(await pageView(deps, result.session, result.members, 'organizer')),
      };
    },
  );

  app.post(
    `${base}/session/join`,
    {
      schema: { ...hide, querystring: AccessQuery, body: JoinBody },
      config: write,
      onRequest: cors,
      preHandler: idempotent,
    },
    async (request) => {
      const { session } = await sessionForToken(deps, request.query.access);
      const { member } = await joinGroup(deps, session, request.body);
      return {
        request_id: request.id,
        session_id: session.id,
        member: { ...memberView(deps, session, member, 'member') },
        share_id: member.shareId,
        share_url: shareUrl(deps, member.shareId),
        amount_due_cents: chargeAmount(member.amountCents, session.consumerFeePpm),
      };
    },
  );

  app.post(
    `${base}/session/cancel`,
    { schema: { ...hide, querystring: AccessQuery }, config: write, onRequest: cors, preHandler: idempotent },
    async (request) => {
      const session = await organizerSession(deps, request.query.access);
      return { request_id: request.id, ...closedToWire(await closeSession(deps, session.id, 'cancelled')) };
    },
  );

  app.get(
    `${base}/shares/:shareId`,
    {
      schema: {
        ...hide,
        // No maxLength: a share id that is too long is an unknown share (404); the router caps it at 100.
        params: Type.Object({ shareId: Type.String() }),
        response: { 200: ShareView },
      },
      config: read,
      onRequest: cors,
    },
    async (request) => {
      const member = await findMemberByShareId(deps.db.kysely, request.params.shareId);
      const session = member && (await findSessionById(deps.db.kysely, member.merchantId, member.sessionId));
      if (!member || !session) throw new ApiError('share_not_found');
      const merchant = await findMerchantById(deps.db.kysely, session.merchantId);
      return {
        request_id: request.id,
        share_id: member.shareId,
        session_id: session.id,
        session_status: session.status,
        merchant_name: merchant?.name ?? '',
        order_ref: session.orderRef,
        currency: session.currency,
        expires_at: toIso(session.expiresAt),
        member: memberToWire(member),
        consumer_fee_cents: consumerFee(member.amountCents, session.consumerFeePpm),
        amount_due_cents: chargeAmount(member.amountCents, session.consumerFeePpm),
        cart: cartView(session),
      };
    },
  );
}
