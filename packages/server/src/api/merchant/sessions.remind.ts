// POST /sessions/{sessionId}/remind — mails members with pending shares (docs/api.md#reminders).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { remindPendingMembers } from '../../flows/reminders.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, NoBody, rateLimitConfig, responses, SessionParams } from '../schemas.ts';

const Reminded = Type.Object({
  session_id: Type.String(),
  reminded: Type.Integer({ description: 'Reminders sent.' }),
  skipped: Type.Integer({
    description: 'Pending members not reminded: no email, reminded within the hour, or no organizer email.',
  }),
  failed: Type.Integer({ description: 'Reminders the mail server refused.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    '/sessions/:sessionId/remind',
    {
      schema: {
        summary: 'Remind members with pending shares',
        tags: ['sessions'],
        params: SessionParams,
        body: NoBody,
        response: responses(Reminded, [...AUTH_ERRORS, 404, 409]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'SESSIONS_REMIND') },
    },
    async (request) => {
      const { merchant } = callerOf(request);
      const { session, ...counts } = await remindPendingMembers(deps, merchant.id, request.params.sessionId);
      return { session_id: session.id, ...counts };
    },
  );
}
