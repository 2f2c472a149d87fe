// PUT {pay_url}/api/v1/session/group?access=ORGANIZER_TOKEN — the organizer sets the group up: the split
// mode and the members (docs/api.md#split-modes). Answers the page with the members' share links.
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { CART_LIMITS } from '../../domain/cart.ts';
import { GROUP_LIMITS } from '../../domain/group-config.ts';
import { BASIS_POINTS_TOTAL } from '../../domain/split.ts';
import { setUpGroup } from '../../flows/group.ts';
import { merchantNameOf } from '../../flows/pay-access.ts';
import { payLinks, payPageToWire } from '../../wire/mappers.ts';
import { SplitModeSchema } from '../../wire/schemas.ts';
import { rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery, MemberEmail, MemberName } from './pay.schemas.ts';

const MemberInputSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({ maxLength: 64, description: 'An existing member, to keep their share link.' }),
    ),
    name: MemberName,
    email: Type.Optional(MemberEmail),
    amount_cents: Type.Optional(Type.Integer({ minimum: 0, maximum: CART_LIMITS.maxTotal })),
    basis_points: Type.Optional(Type.Integer({ minimum: 0, maximum: BASIS_POINTS_TOTAL })),
    items: Type.Optional(
      Type.Array(
        Type.Object(
          {
            item_index: Type.Integer({ minimum: 0, maximum: CART_LIMITS.maxItems - 1 }),
            quantity: Type.Integer({ minimum: 0, maximum: CART_LIMITS.maxQuantity }),
          },
          { additionalProperties: false },
        ),
        { maxItems: CART_LIMITS.maxItems },
      ),
    ),
  },
  { additionalProperties: false },
);

const GroupBody = Type.Object(
  {
    mode: SplitModeSchema,
    members: Type.Array(MemberInputSchema, { minItems: 1, maxItems: GROUP_LIMITS.maxSize }),
  },
  { additionalProperties: false },
);

export function register(app: App, deps: Deps) {
  const links = payLinks(deps.config.publicPayUrl);
  app.put(
    '/session/group',
    {
      schema: { hide: true, querystring: AccessQuery, body: GroupBody },
      config: { access: 'organizer', ...rateLimitConfig(deps, 'PAY_WRITE') },
    },
    async (request) => {
      const { session } = payAccessOf(request);
      const result = await setUpGroup(
        deps,
        session.id,
        request.body.mode,
        request.body.members.map((m) => ({
          id: m.id,
          name: m.name,
          email: m.email,
          amountCents: m.amount_cents,
          basisPoints: m.basis_points,
          items: m.items?.map((i) => ({ itemIndex: i.item_index, quantity: i.quantity })),
        })),
      );
      const merchantName = await merchantNameOf(deps, result.session);
      return payPageToWire(result.session, result.members, 'organizer', merchantName, links);
    },
  );
}
