// POST {pay_url}/api/v1/session/join?access=GROUP_TOKEN — a member joins an equal group, and the pending
// shares are split again (docs/api.md#pay-page-routes).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { chargeAmount } from '../../domain/fees.ts';
import { type JoinedGroup, joinGroup } from '../../flows/group.ts';
import { memberToWire, payLinks } from '../../wire/mappers.ts';
import { withAnswer } from '../idempotency.ts';
import { rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery, MemberEmail, MemberName } from './pay.schemas.ts';

const JoinBody = Type.Object(
  { name: MemberName, email: Type.Optional(MemberEmail) },
  { additionalProperties: false },
);

export function register(app: App, deps: Deps) {
  const links = payLinks(deps.config.publicPayUrl);
  app.post(
    '/session/join',
    {
      schema: { hide: true, querystring: AccessQuery, body: JoinBody },
      config: { access: 'any', ...rateLimitConfig(deps, 'PAY_WRITE') },
    },
    async (request) => {
      const { session } = payAccessOf(request);
      return withAnswer(
        request,
        ({ member }: JoinedGroup) => ({
          session_id: session.id,
          member: memberToWire(member, { kind: 'member' }),
          share_id: member.shareId,
          share_url: links.share(member.shareId),
          amount_due_cents: chargeAmount(member.amountCents, session.consumerFeePpm, session.chargeStep),
        }),
        (answer) => joinGroup(deps, session.id, request.body, answer),
      );
    },
  );
}
