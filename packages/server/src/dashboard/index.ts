// The merchant dashboard under {pay_url}/dashboard (docs/dashboard.md): pages rendered on the server and
// forms, no script at all. An encapsulated plugin with its own headers (a Content-Security-Policy that
// allows only our stylesheet, no framing, no referrer to other sites) and its own error pages. Every read and change goes
// through the flows the API uses; every change is a POST carrying the session's CSRF token from a page of
// ours (checked Origin), by a role allowed to make it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, PageSurfaces } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { EVENT_TYPES, type EventType } from '../domain/event-types.ts';
import { originOfAddress } from '../domain/origins.ts';
import { ServiceError, STATUS_OF } from '../errors.ts';
import {
  DASHBOARD_ROLES,
  findMerchantForDashboard,
  inviteTeammate,
  listTeam,
  mailSignInLinks,
  removeTeammate,
  sessionForCookie,
  signInLinkIsLive,
  signInWithLink,
  signOut,
} from '../flows/dashboard-access.ts';
import {
  keysPage,
  listSessionsPage,
  overviewPage,
  requestLogPage,
  sessionPage,
  webhooksPage,
} from '../flows/dashboard-reads.ts';
import { renameMerchant, setPayoutCurrency, startPayoutOnboarding } from '../flows/dashboard-settings.ts';
import { redeliverEvent } from '../flows/events.ts';
import {
  allowedOriginsOf,
  changeAllowedOrigins,
  removeAllowedOrigin,
  rollMerchantSecret,
  rollPublishableKey,
  rollSecretKey,
} from '../flows/merchants.ts';
import { remindPendingMembers } from '../flows/reminders.ts';
import { closeMerchantSession } from '../flows/sessions.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  sendTestEvent,
} from '../flows/webhooks.ts';
import { sendCompressed } from '../pages/compressed.ts';
import type { Html } from '../pages/html.ts';
import type { DashboardRole, DashboardSession } from '../store/dashboard.ts';
import type { Merchant } from '../store/merchants.ts';
import { dashboardStyles } from './assets.ts';
import { FORM_LIMIT_BYTES, Form } from './form.ts';
import { documentOf, type Section } from './layout.ts';
import { clearCookie, cookieSettings, readCookie, sameOrigin, setCookie, tokensMatch } from './session.ts';
import { developersView, ROLLS, type Rollable } from './views/developers.ts';
import { overviewView } from './views/overview.ts';
import { SESSION_STATUSES, type StatusFilter, sessionsListView, sessionView } from './views/sessions.ts';
import { settingsView } from './views/settings.ts';
import { askForLinkView, confirmLinkView, deadLinkView, linkSentView, messageView } from './views/sign-in.ts';
import { secretShownOnce, webhooksView } from './views/webhooks.ts';

const POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

const HEADERS = {
  'content-security-policy': POLICY,
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it, browsers send `Origin: null` on a form's POST, and every change is checked by
  // its Origin. same-origin sends nothing to other sites (the sign-in page's URL carries a token).
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** What a change needs of the signed-in user's role: any change (not a viewer), or the team (an owner). */
type Need = 'change' | 'team';
const allowed = (role: DashboardRole, need: Need) =>
  need === 'change' ? role !== 'viewer' : role === 'owner';

/** Words shown after a change, chosen by the redirect's ?done= (an own key only: noticeOf). */
const NOTICES: Record<string, string> = {
  // Not "refunded": a hold is released instead, and a payment under dispute is returned by the payer's bank.
  cancelled:
    'The session was cancelled. Paid shares are being returned to the payers: card payments refunded, holds released (a payment under dispute is returned by the payer’s bank instead). Refunds and releases below lists each one as it goes.',
  redelivered: 'The event is on its way again to every current target.',
  invited: 'Invitation sent: they get a sign-in link by mail.',
  removed: 'Removed from the team; their sessions ended.',
  renamed: 'Name saved.',
  payout: 'Payout currency saved.',
  'origin-added': 'Origin added: its pages may create sessions now.',
  'origin-removed': 'Origin removed: its pages can no longer create sessions.',
  deleted: 'The endpoint was deleted: it gets no more deliveries.',
  'test-sent':
    'A signed webhook.test event is on its way to the endpoint, after any deliveries already waiting for it: its attempts show under Recent deliveries.',
};

/**
 * The notice a page's ?done= names, if it names one of ours: an own key of NOTICES, never one the object
 * inherits (?done=constructor once printed Object's source).
 */
function noticeOf(query: Record<string, unknown>): string | undefined {
  const done = query.done;
  if (done === 'reminded') return remindedNotice(query);
  return typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;
}

/**
 * What a reminder round did, from the redirect's counts (the remind route's answer): how many mails went,
 * and why the other pending members got none.
 */
function remindedNotice(query: Record<string, unknown>): string {
  const count = (name: string) => {
    const value = query[name];
    return typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : 0;
  };
  const [sent, skipped, failed] = [count('sent'), count('skipped'), count('failed')];
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const parts = [sent === 0 ? 'No reminder was sent.' : `${plural(sent, 'reminder', 'reminders')} sent.`];
  if (skipped > 0)
    parts.push(
      `${plural(skipped, 'pending member was', 'pending members were')} not mailed: no email, or a reminder limit reached (once an hour each, three rounds a session).`,
    );
  if (failed > 0)
    parts.push(
      `${plural(failed, 'mail was', 'mails were')} refused by the mail server; you may try again now.`,
    );
  return parts.join(' ');
}

/**
 * The status a refusal is shown with: the API's for the same code (STATUS_OF, the one table), when it is
 * one to say in words: any refusal below 500, and upstream_error (503: the processor did not answer). Any
 * other 5xx is ours, shown as the generic page that names the request.
 */
function refusalStatus(error: Error): number | undefined {
  if (error instanceof ServiceError) {
    const status = STATUS_OF[error.code];
    return status < 500 || error.code === 'upstream_error' ? status : undefined;
  }
  // Fastify's own refusals of a request (a body too large, a broken URL) carry their status.
  const status = (error as { statusCode?: number }).statusCode;
  return status !== undefined && status >= 400 && status < 500 ? status : undefined;
}

/** Bodies refused before any route runs: not a form, or a form too large; in words, with their status. */
const BODY_REFUSALS: Record<string, { status: number; words: (contentType?: string) => string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    words: (contentType) =>
      `Every dashboard change is a form sent as application/x-www-form-urlencoded; this request came ${contentType ? `as ${contentType.slice(0, 100)}` : 'with no Content-Type'}. Nothing was changed.`,
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    words: () =>
      `A dashboard form is at most ${FORM_LIMIT_BYTES / 1024} KB; this one is larger. Nothing was changed.`,
  },
};

/**
 * A query parameter of a page's own links and forms: undefined when absent or empty (a form's empty field),
 * one string otherwise; given more than once it is refused in words (invalid_request), since either value
 * shown alone would claim to be what was asked for.
 */
function queryValue(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string')
    throw new ServiceError('invalid_request', {
      message: `The address gives "${name}" more than once; it takes one value.`,
    });
  return value;
}

interface Signed {
  session: DashboardSession;
  merchant: Merchant;
}

export async function merchantDashboard(
  app: App,
  { deps, surfaces }: { deps: Deps; surfaces: PageSurfaces },
) {
  const { config } = deps;
  const base = `${config.payPrefix}/dashboard`;
  const css = await dashboardStyles();
  const cookie = cookieSettings(config);
  const chrome = { base, cssHref: `${base}/assets/${css.name}`, sandbox: config.serviceEnv === 'sandbox' };
  const read = { rateLimit: { max: config.rateLimits.PAY_READ, timeWindow: 60_000 } };
  const write = { rateLimit: { max: config.rateLimits.PAY_WRITE * 4, timeWindow: 60_000 } };
  // Asking for links is what a stranger can do: few per minute from one address.
  const askLimit = { rateLimit: { max: Math.min(10, config.rateLimits.PAY_WRITE), timeWindow: 60_000 } };

  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(HEADERS);
    done();
  });
  // Forms, as browsers send them, and nothing else: the JSON (and text) parsers the app sets at its root are
  // removed here, so any other body is 415 before a route runs (docs/dashboard.md#signing-in).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => done(null, Form.parse(String(body))),
  );
  const formOf = (request: FastifyRequest) => (request.body instanceof Form ? request.body : Form.EMPTY);

  const send = (reply: FastifyReply, status: number, page: Parameters<typeof documentOf>[1]) =>
    reply.code(status).type('text/html; charset=utf-8').send(documentOf(chrome, page));

  const signedInChrome = (s: Signed, section?: Section) => ({
    merchantName: s.merchant.name,
    user: s.session.user,
    csrf: s.session.csrfToken,
    ...(section ? { section } : {}),
  });

  async function signedIn(request: FastifyRequest): Promise<Signed | undefined> {
    const value = readCookie(request, cookie.name);
    if (!value) return undefined;
    const session = await sessionForCookie(deps, value);
    if (!session) return undefined;
    const merchant = await findMerchantForDashboard(deps, session.user.merchantId);
    return merchant && { session, merchant };
  }

  const answerError = (error: Error, request: FastifyRequest, reply: FastifyReply) => {
    // Set by the onRequest hook above, but not on a URL the router refused before any hook ran.
    reply.headers(HEADERS);
    const bodyRefused = BODY_REFUSALS[(error as { code?: string }).code ?? ''];
    if (bodyRefused)
      return send(reply, bodyRefused.status, {
        title: 'Not done',
        body: messageView('Not done', bodyRefused.words(request.headers['content-type']), {
          href: `${base}/sessions`,
          label: 'Back to the dashboard',
        }),
      });
    const status = refusalStatus(error);
    // A refusal is shown in its words with the API's status; other errors of ours are a 500 that names
    // the request.
    if (status !== undefined) {
      const text = error instanceof ServiceError ? error.message : 'The request was not understood.';
      return send(reply, status, {
        title: 'Not done',
        body: messageView('Not done', text, { href: `${base}/sessions`, label: 'Back to the dashboard' }),
      });
    }
    request.log.error({ request_id: request.id, err: error }, 'dashboard page failed');
    return send(reply, 500, {
      title: 'Something went wrong',
      body: messageView('Something went wrong', `Reload in a moment. Request ${request.id}.`),
    });
  };
  app.setErrorHandler(answerError);
  // A URL the router refused before any route (a broken %-escape) is answered as a page too.
  surfaces.add(app.prefix, answerError);
  app.setNotFoundHandler((_request, reply) =>
    send(reply, 404, { title: 'Not found', body: messageView('Not found', 'There is no such page.') }),
  );

  /** A page for a signed-in user; anyone else is sent to sign in. */
  function page(
    url: string,
    render: (request: FastifyRequest, s: Signed) => Promise<{ title: string; body: Html; section?: Section }>,
  ) {
    app.get(url, { schema: { hide: true }, config: read }, async (request, reply) => {
      const s = await signedIn(request);
      if (!s) return reply.code(303).header('location', `${base}/sign-in`).send();
      const { title, body, section } = await render(request, s);
      const query = request.query as Record<string, unknown>;
      const notice = noticeOf(query);
      return send(reply, 200, {
        title,
        body,
        signedIn: signedInChrome(s, section),
        ...(notice ? { notice } : {}),
      });
    });
  }

  const refuse = (reply: FastifyReply, status: number, title: string, text: string) =>
    send(reply, status, {
      title,
      body: messageView(title, text, { href: `${base}/sessions`, label: 'Back to the dashboard' }),
    });

  /**
   * A change: signed in, from our own page (Origin), with the session's CSRF token, by a role allowed to
   * make it; otherwise refused before anything changes.
   */
  function guarded(
    url: string,
    need: Need,
    run: (request: FastifyRequest, reply: FastifyReply, s: Signed, form: Form) => Promise<unknown>,
  ) {
    app.post(url, { schema: { hide: true }, config: write }, async (request, reply) => {
      const s = await signedIn(request);
      if (!s)
        return refuse(reply, 401, 'Signed out', 'Your session ended. Sign in again, then repeat the change.');
      const form = formOf(request);
      if (!sameOrigin(request, cookie) || !tokensMatch(form.only('_csrf'), s.session.csrfToken))
        return refuse(
          reply,
          403,
          'Refused',
          'This change did not come from a dashboard page. Nothing was changed.',
        );
      if (!allowed(s.session.user.role, need))
        return refuse(
          reply,
          403,
          'Not allowed',
          need === 'team'
            ? 'Only an owner may change the team or payouts. Nothing was changed.'
            : 'Viewers may read but not change anything. Nothing was changed.',
        );
      return run(request, reply, s, form);
    });
  }

  /** A change that answers a redirect to the page to show next. */
  const action = (
    url: string,
    need: Need,
    run: (request: FastifyRequest, s: Signed, form: Form) => Promise<string>,
  ) =>
    guarded(url, need, async (request, reply, s, form) =>
      reply
        .code(303)
        .header('location', await run(request, s, form))
        .send(),
    );

  /** A change that answers a page itself (a secret shown once must not go through a URL). */
  const actionWithPage = (
    url: string,
    need: Need,
    run: (
      request: FastifyRequest,
      s: Signed,
      form: Form,
    ) => Promise<{ title: string; body: Html; section?: Section }>,
  ) =>
    guarded(url, need, async (request, reply, s, form) => {
      const { title, body, section } = await run(request, s, form);
      return send(reply, 200, { title, body, signedIn: signedInChrome(s, section) });
    });

  // ---- Signing in ----
  app.get('/sign-in', { schema: { hide: true }, config: read }, async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    if (typeof token === 'string' && token.length > 0) {
      const live = token.length <= 100 && (await signInLinkIsLive(deps, token));
      return live
        ? send(reply, 200, { title: 'Sign in', body: confirmLinkView(base, token) })
        : send(reply, 410, { title: 'Link does not work', body: deadLinkView(base) });
    }
    return send(reply, 200, { title: 'Sign in', body: askForLinkView(base) });
  });

  app.post('/sign-in/request', { schema: { hide: true }, config: askLimit }, async (request, reply) => {
    if (!sameOrigin(request, cookie))
      return refuse(reply, 403, 'Refused', 'Ask for a link from the sign-in page.');
    const email = formOf(request).one('email');
    // Sent after the answer, so that neither the words nor the time taken tell whether the address is known.
    void mailSignInLinks(deps, email).catch((error: Error) =>
      deps.logger.warn({ err: error.message }, 'dashboard sign-in mail failed'),
    );
    return send(reply, 200, { title: 'Check your mail', body: linkSentView(base) });
  });

  app.post('/sign-in', { schema: { hide: true }, config: write }, async (request, reply) => {
    if (!sameOrigin(request, cookie))
      return refuse(reply, 403, 'Refused', 'Open the sign-in link from your mail, then continue.');
    const token = formOf(request).one('token');
    const opened = token.length > 0 && token.length <= 100 ? await signInWithLink(deps, token) : undefined;
    if (!opened) return send(reply, 410, { title: 'Link does not work', body: deadLinkView(base) });
    return reply
      .code(303)
      .header('set-cookie', setCookie(cookie, opened.cookie))
      .header('location', `${base}/sessions`)
      .send();
  });

  app.post('/sign-out', { schema: { hide: true }, config: write }, async (request, reply) => {
    const s = await signedIn(request);
    if (s) {
      if (!sameOrigin(request, cookie) || !tokensMatch(formOf(request).only('_csrf'), s.session.csrfToken))
        return refuse(
          reply,
          403,
          'Refused',
          'This change did not come from a dashboard page. Nothing was changed.',
        );
      await signOut(deps, s.session);
    }
    return reply
      .code(303)
      .header('set-cookie', clearCookie(cookie))
      .header('location', `${base}/sign-in`)
      .send();
  });

  // ---- Pages ----
  page('/', async (_request, s) => ({
    title: 'Overview',
    section: 'overview',
    body: overviewView(await overviewPage(deps, s.merchant.id)),
  }));

  page('/sessions', async (request, s) => {
    const q = request.query as Record<string, unknown>;
    // "Any status" sends an empty value; anything else must be a status, or the list would claim a filter
    // it did not apply.
    const status = q.status === undefined || q.status === '' ? undefined : (q.status as StatusFilter);
    if (status !== undefined && !SESSION_STATUSES.includes(status))
      throw new ServiceError('invalid_request', {
        message: `There is no session status "${String(status).slice(0, 40)}". Choose one of ${SESSION_STATUSES.join(', ')}, or any status.`,
      });
    const search = queryValue(q, 'q')?.slice(0, 200);
    const cursor = queryValue(q, 'cursor');
    const { rows, nextCursor } = await listSessionsPage(deps, s.merchant.id, { status, search, cursor });
    return {
      title: 'Sessions',
      section: 'sessions',
      body: sessionsListView(base, { status, search }, rows, nextCursor),
    };
  });

  page('/sessions/:sessionId', async (request, s) => {
    const { sessionId } = request.params as { sessionId: string };
    const data = await sessionPage(deps, s.merchant.id, sessionId);
    return {
      title: `Session ${sessionId}`,
      section: 'sessions',
      body: sessionView(
        base,
        data,
        { change: allowed(s.session.user.role, 'change'), csrf: s.session.csrfToken },
        deps.clock.now(),
      ),
    };
  });

  page('/webhooks', async (_request, s) => ({
    title: 'Webhooks',
    section: 'webhooks',
    body: webhooksView(base, {
      can: { change: allowed(s.session.user.role, 'change'), csrf: s.session.csrfToken },
      ...(await webhooksPage(deps, s.merchant.id)),
    }),
  }));

  const developersBody = async (
    s: Signed,
    query: { cursor?: string; requestId?: string },
    shown?: { what: string; value: string; after: string },
  ) =>
    developersView(base, {
      merchantId: s.merchant.id,
      keys: await keysPage(deps, s.merchant.id),
      origins: (await allowedOriginsOf(deps.db, s.merchant.id)) ?? [],
      can: { change: allowed(s.session.user.role, 'change'), csrf: s.session.csrfToken },
      now: deps.clock.now(),
      requests: await requestLogPage(deps, s.merchant.id, query).then((page) =>
        query.requestId ? { requestId: query.requestId, ...page } : page,
      ),
      ...(shown ? { shown } : {}),
    });

  page('/developers', async (request, s) => {
    const q = request.query as Record<string, unknown>;
    const requestId = queryValue(q, 'request_id')?.trim().slice(0, 100) ?? '';
    const cursor = queryValue(q, 'before');
    return {
      title: 'Developers',
      section: 'developers',
      body: await developersBody(
        s,
        Object.assign(requestId ? { requestId } : {}, cursor !== undefined ? { cursor } : {}),
      ),
    };
  });

  const settingsBody = async (s: Signed, onboarding?: { url: string; expiresAt: number }) =>
    settingsView(base, {
      merchant: s.merchant,
      processor: deps.processor.name === 'stripe' ? 'stripe' : 'sandbox',
      team: await listTeam(deps, s.merchant.id),
      me: s.session.user,
      csrf: s.session.csrfToken,
      ...(onboarding ? { onboarding } : {}),
    });

  page('/settings', async (_request, s) => ({
    title: 'Settings',
    section: 'settings',
    body: await settingsBody(s),
  }));

  // Where Stripe sends a person back from onboarding. The session cookie is SameSite=Strict, so a browser
  // coming from Stripe's pages does not send it: these pages need no sign-in, say what happened, and link to
  // Settings (a link followed on our own page carries the cookie again).
  app.get('/payouts/:outcome', { schema: { hide: true }, config: read }, async (request, reply) => {
    const { outcome } = request.params as { outcome: string };
    if (outcome !== 'return' && outcome !== 'refresh')
      return send(reply, 404, {
        title: 'Not found',
        body: messageView('Not found', 'There is no such page.'),
      });
    const settings = { href: `${base}/settings`, label: 'Open Settings' };
    return send(reply, 200, {
      title: 'Back from Stripe',
      body:
        outcome === 'return'
          ? messageView(
              'Back from Stripe',
              'Stripe has what you gave it so far. Settings shows the connected account; Stripe enables payouts once it has checked the details, and asks by mail for anything missing.',
              settings,
            )
          : messageView(
              'The Stripe link has expired',
              'Onboarding links work once and for a few minutes. Open Settings and press Continue onboarding with Stripe for a new one.',
              settings,
            ),
    });
  });

  // ---- Changes, through the API's flows ----
  action('/sessions/:sessionId/cancel', 'change', async (request, s) => {
    const { sessionId } = request.params as { sessionId: string };
    await closeMerchantSession(deps, s.merchant.id, sessionId, 'cancelled');
    return `${base}/sessions/${sessionId}?done=cancelled`;
  });

  action('/sessions/:sessionId/remind', 'change', async (request, s) => {
    const { sessionId } = request.params as { sessionId: string };
    const { reminded, skipped, failed } = await remindPendingMembers(deps, s.merchant.id, sessionId);
    return `${base}/sessions/${sessionId}?done=reminded&sent=${reminded}&skipped=${skipped}&failed=${failed}`;
  });

  action('/events/:eventId/redeliver', 'change', async (request, s) => {
    const { eventId } = request.params as { eventId: string };
    const detail = await redeliverEvent(deps, s.merchant.id, eventId);
    const sessionId = detail.event.data.session_id;
    return `${base}/sessions/${sessionId}?done=redelivered`;
  });

  // A new or rotated secret is shown on the answer itself (never in a URL, never again): these two
  // changes answer the page rather than a redirect.
  const showSecret = async (
    what: string,
    s: Signed,
    endpoint: { id: string; url: string; secret: string },
  ) => ({
    title: 'Webhooks',
    section: 'webhooks' as const,
    body: webhooksView(base, {
      can: { change: true, csrf: s.session.csrfToken },
      shown: secretShownOnce(what, endpoint, endpoint.secret),
      ...(await webhooksPage(deps, s.merchant.id)),
    }),
  });

  actionWithPage('/webhooks', 'change', async (_request, s, form) => {
    const chosen = form.one('events');
    const events = chosen === '*' ? ['*' as const] : EVENT_TYPES.filter((t): t is EventType => t === chosen);
    if (events.length === 0)
      throw new ServiceError('invalid_request', { message: 'events must be * or one event type' });
    const endpoint = await createWebhookEndpoint(deps, s.merchant.id, {
      url: form.one('url').trim(),
      events,
    });
    return showSecret('Endpoint added', s, endpoint);
  });

  actionWithPage('/webhooks/:webhookId/rotate', 'change', async (request, s) => {
    const { webhookId } = request.params as { webhookId: string };
    const endpoint = await rotateWebhookSecret(deps, s.merchant.id, webhookId);
    return showSecret('Secret rotated: the old one signs too for 24 hours', s, endpoint);
  });

  // A signed webhook.test event to this endpoint alone, through the dispatcher like any event.
  action('/webhooks/:webhookId/test', 'change', async (request, s) => {
    const { webhookId } = request.params as { webhookId: string };
    await sendTestEvent(deps, s.merchant.id, webhookId);
    return `${base}/webhooks?done=test-sent`;
  });

  action('/webhooks/:webhookId/delete', 'change', async (request, s) => {
    const { webhookId } = request.params as { webhookId: string };
    await deleteWebhookEndpoint(deps, s.merchant.id, webhookId);
    return `${base}/webhooks?done=deleted`;
  });

  // The CLI's `merchant keys roll`, from the page; the new value is shown on the answer, once.
  actionWithPage('/developers/roll/:what', 'change', async (request, s) => {
    const what = (request.params as { what: string }).what as Rollable;
    if (!Object.hasOwn(ROLLS, what)) throw new ServiceError('route_not_found');
    const now = deps.clock.now();
    const merchantId = s.merchant.id;
    const value =
      what === 'secret-key'
        ? (await rollSecretKey(deps.db, merchantId, now))?.secretKey
        : what === 'publishable-key'
          ? (await rollPublishableKey(deps.db, merchantId, now))?.value
          : (
              await rollMerchantSecret(
                deps.db,
                merchantId,
                what === 'signing-secret' ? 'signing' : 'session_webhook',
                now,
              )
            )?.value;
    if (!value) throw new ServiceError('route_not_found');
    return {
      title: 'Developers',
      section: 'developers',
      body: await developersBody(s, {}, { what: ROLLS[what].what, value, after: ROLLS[what].after }),
    };
  });

  // The CLI's `merchant update --allowed-origin`, from the page: what a person types is taken as the CLI
  // takes it (a page's address becomes its origin), and stored canonical (domain/origins.ts).
  action('/developers/origins', 'change', async (_request, s, form) => {
    const parsed = originOfAddress(form.one('origin'), deps.config.serviceEnv);
    if (!parsed.ok)
      throw new ServiceError('invalid_request', {
        message: `The origin must be a web origin such as https://shop.example: ${parsed.reason}.`,
      });
    await changeAllowedOrigins(deps.db, s.merchant.id, { add: [parsed.origin], remove: [] });
    return `${base}/developers?done=origin-added`;
  });

  // Taken as adding takes it, so https://Shop.example/ removes https://shop.example; one that is not
  // registered is said so rather than reported removed.
  action('/developers/origins/remove', 'change', async (_request, s, form) => {
    const result = await removeAllowedOrigin(deps.db, s.merchant.id, form.one('origin'));
    if (!result) throw new ServiceError('route_not_found');
    if (!result.removed)
      throw new ServiceError('invalid_request', {
        message: `${result.origin.slice(0, 255)} is not registered for this merchant, so nothing was removed. The Developers page lists the registered origins.`,
      });
    return `${base}/developers?done=origin-removed`;
  });

  action('/settings/name', 'change', async (_request, s, form) => {
    await renameMerchant(deps, s.merchant.id, form.one('name'));
    return `${base}/settings?done=renamed`;
  });

  action('/settings/payout', 'team', async (_request, s, form) => {
    await setPayoutCurrency(deps, s.merchant.id, form.one('currency'));
    return `${base}/settings?done=payout`;
  });

  // With Stripe: the Connect onboarding link, made for this owner now and shown on the answer (it works once
  // and for a few minutes; a redirect to Stripe would be refused by this page's form-action policy).
  actionWithPage('/settings/payouts/stripe', 'team', async (_request, s) => {
    const link = await startPayoutOnboarding(deps, s.merchant.id);
    const merchant = (await findMerchantForDashboard(deps, s.merchant.id)) ?? s.merchant;
    return {
      title: 'Settings',
      section: 'settings',
      body: await settingsBody({ ...s, merchant }, { url: link.url, expiresAt: link.expiresAt }),
    };
  });

  action('/team/invite', 'team', async (_request, s, form) => {
    const chosen = form.one('role');
    const role = DASHBOARD_ROLES.find((r) => r === chosen);
    if (!role)
      throw new ServiceError('invalid_request', { message: 'role must be owner, developer or viewer' });
    await inviteTeammate(deps, s.merchant.id, { email: form.one('email'), role });
    return `${base}/settings?done=invited`;
  });

  action('/team/:userId/remove', 'team', async (request, s) => {
    const { userId } = request.params as { userId: string };
    await removeTeammate(deps, s.merchant.id, userId);
    return `${base}/settings?done=removed`;
  });

  app.get('/assets/:name', { schema: { hide: true }, config: { public: true } }, (request, reply) => {
    if ((request.params as { name: string }).name !== css.name)
      return reply.code(404).type('text/plain; charset=utf-8').send('No such file.');
    reply.header('cache-control', 'public, max-age=31536000, immutable').type('text/css; charset=utf-8');
    return sendCompressed(request, reply, css);
  });
}
