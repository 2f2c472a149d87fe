// POST /sessions/{sessionId}/remind — mails members with pending shares (SPEC.md §4.5, DESIGN.md §12).
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { remindPendingMembers } from '../flows/reminders.ts';
import { findSessionById } from '../store/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses } from './schemas.ts';
import { SessionParams } from './sessions.get.ts';

const Reminded = Type.Object({
  request_id: RequestId,
  session_id: Type.String(),
  reminded: Type.Integer({ description: 'Reminders sent.' }),
  skipped: Type.Integer({
    description: 'Pending members not reminded: no email, reminded within the hour, or no organizer email.',
  }),
  failed: Type.Integer({ description: 'Reminders the mail server refused.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    `${deps.config.apiPrefix}/sessions/:sessionId/remind`,
    {
      schema: {
        summary: 'Remind members with pending shares',
        tags: ['sessions'],
        params: SessionParams,
        response: responses(Reminded, [...AUTH_ERRORS, 404, 409]),
      },
      config: rateLimitConfig(deps, 'SESSIONS_REMIND'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const merchant = merchantOf(request);
      const session = await findSessionById(deps.db.kysely, merchant.id, request.params.sessionId);
      if (!session) throw new ApiError('session_not_found');
      const result = await remindPendingMembers(deps, merchant, session);
      return { request_id: request.id, session_id: session.id, ...result };
    },
  );
}
