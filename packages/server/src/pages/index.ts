// The hosted pages under {pay_url} (docs/api.md#hosted-pages-and-embedding, docs/architecture.md): the
// organizer's page and the group's page at /session/:id?access=…, a member's page at /s/:shareId, and the
// assets they load. An encapsulated plugin with its own headers: a Content-Security-Policy that lets the
// page be framed only where its session allows (and nowhere outside embed mode), no referrer (page URLs
// carry tokens), no MIME sniffing. Pages are rendered on the server from the same data the pay-page API
// answers; their scripts take over from there. A refusal is a page in words, never JSON or a stack trace.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, PageSurfaces } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { canonicalOrigins, parseOrigin } from '../domain/origins.ts';
import { ServiceError } from '../errors.ts';
import { loadPayPage, loadSharePage, sessionForToken } from '../flows/pay-access.ts';
import { CATALOGUES } from '../i18n/catalogues.ts';
import { chooseLocale, type Locale } from '../i18n/locales.ts';
import { translator } from '../i18n/translate.ts';
import type { Session } from '../store/sessions.ts';
import { payLinks, payPageToWire, shareToWire } from '../wire/mappers.ts';
import { type PageScript, pageAssets } from './assets.ts';
import { sendCompressed } from './compressed.ts';
import type { Html } from './html.ts';
import { layout, type Theme } from './layout.ts';
import { registerSdkAssets } from './sdk-assets.ts';
import { groupView, organizerView, problemView, shareView } from './views/pages.ts';
import { draftOf } from './views/setup.ts';
import type { PageContext, PageSession, PageShare } from './views/types.ts';

const STRIPE_JS = 'https://js.stripe.com';

/** The Content-Security-Policy of a page: framed by `ancestors` only ("'none'" outside embed mode). */
function pagePolicy(ancestors: readonly string[], stripe: boolean): string {
  return [
    "default-src 'self'",
    // Item thumbnails are the merchant's https images; images cannot run code.
    "img-src 'self' https: data:",
    // Stripe.js, its Payment Element and wallets, and the frame in which it shows a bank's 3-D Secure page
    // (the bank's own page is framed inside Stripe's, under Stripe's policy, not ours).
    stripe ? `script-src 'self' ${STRIPE_JS} https://*.js.stripe.com` : "script-src 'self'",
    stripe ? `frame-src ${STRIPE_JS} https://*.js.stripe.com https://hooks.stripe.com` : "frame-src 'none'",
    stripe ? "connect-src 'self' https://api.stripe.com" : "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${ancestors.length > 0 ? ancestors.join(' ') : "'none'"}`,
  ].join('; ');
}

const BASE_PAGE_HEADERS = {
  'content-security-policy': pagePolicy([], false),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

type PageQuery = Record<string, string | string[] | undefined>;
const one = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

const THEMES: readonly Theme[] = ['auto', 'light', 'dark'];

/**
 * What the URL asks of the page: embed mode, the parent to post to, the theme. The frame ancestors are the
 * session's recorded origins, each re-parsed here (a row from before origins were parsed may hold anything:
 * what is not a canonical origin is left out); the parent is parent_origin only when, parsed, it is one
 * of them. No value from the request or the row reaches the policy or the page unparsed.
 */
function embedding(query: PageQuery, session: Session | undefined) {
  const embed = one(query.embed) === '1';
  const recorded = canonicalOrigins(session?.embedOrigins ?? []);
  const parent = parseOrigin(one(query.parent_origin), 'sandbox');
  const parentOrigin = embed && parent.ok && recorded.includes(parent.origin) ? parent.origin : undefined;
  const themeAsked = one(query.theme) as Theme | undefined;
  const theme = themeAsked && THEMES.includes(themeAsked) ? themeAsked : 'auto';
  // Outside embed mode nothing may frame the page; in it, only the recorded origins (never parent_origin).
  return { embed, parentOrigin, theme, ancestors: embed ? recorded : [] };
}

/**
 * What a page carries of its language's catalogue (in its data, for its script): every message but the
 * mail's, which no page shows, and, unless the processor is the sandbox, the sandbox's notes, so that no
 * page of a deployment taking real cards says "sandbox", even in its data (docs/decisions.md#real-money).
 */
function pageCatalogues(sandbox: boolean): typeof CATALOGUES {
  const shown = (key: string) => !key.startsWith('mail.') && (sandbox || !key.endsWith('.sandbox'));
  return Object.fromEntries(
    Object.entries(CATALOGUES).map(([lang, messages]) => [
      lang,
      Object.fromEntries(Object.entries(messages).filter(([key]) => shown(key))),
    ]),
  ) as typeof CATALOGUES;
}

export async function hostedPages(app: App, { deps, surfaces }: { deps: Deps; surfaces: PageSurfaces }) {
  const { config } = deps;
  const assets = await pageAssets();
  const assetBase = `${config.payPrefix}/assets`;
  const apiBase = `${config.payPrefix}/api/v1`;
  const links = payLinks(config.publicPayUrl);
  const stripe = deps.processor.name === 'stripe';
  const catalogues = pageCatalogues(deps.processor.name === 'sandbox');

  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(BASE_PAGE_HEADERS);
    done();
  });

  /** The page's language: the session's own when it has one (POST /sessions locale), else the reader's. */
  const language = (request: FastifyRequest, sessionLocale?: string | null) => {
    const chosen = chooseLocale(sessionLocale, request.headers['accept-language']);
    const messages = catalogues[chosen.lang];
    return { lang: chosen.lang, locale: chosen.intl, messages, t: translator(messages, chosen.intl) };
  };

  const context = (
    request: FastifyRequest,
    e: ReturnType<typeof embedding>,
    session: { locale: string | null; currency: string },
    access?: string,
  ): PageContext => ({
    apiBase,
    ...(({ lang, locale, messages }) => ({ lang, locale, messages }))(language(request, session.locale)),
    ...(access ? { access } : {}),
    embed: e.embed,
    ...(e.parentOrigin ? { parentOrigin: e.parentOrigin } : {}),
    processor: stripe ? 'stripe' : 'sandbox',
    ...(config.stripePublishableKey ? { stripePublishableKey: config.stripePublishableKey } : {}),
    ...(stripe ? { stripeAmountShift: deps.processor.currencies.stripeAmountShift(session.currency) } : {}),
  });

  function send(
    reply: FastifyReply,
    status: number,
    e: ReturnType<typeof embedding>,
    page: {
      title: string;
      body: Html;
      script?: PageScript;
      data?: unknown;
      lang: Locale;
      /** The page's tag for `lang`: the reader's regional one when it is the page's language (fr-CH). */
      locale: string;
    },
  ) {
    return reply
      .code(status)
      .header('content-security-policy', pagePolicy(e.ancestors, stripe && page.script !== undefined))
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(
        layout({
          title: page.title,
          lang: page.locale,
          theme: e.theme,
          embed: e.embed,
          css: assets.css,
          ...(page.script ? { script: assets.scripts[page.script] } : {}),
          assetBase,
          body: page.body,
          data: page.data,
          words: {
            skip: CATALOGUES[page.lang]['layout.skip'] as string,
            footer: CATALOGUES[page.lang]['layout.footer'] as string,
          },
        }),
      );
  }

  /** A refusal in the reader's language: `kind` names its title and text in the catalogue. */
  const problem = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    kind: 'rateLimited' | 'failed' | 'incomplete' | 'invalid' | 'noShare' | 'blocked' | 'broken',
  ) => {
    const { lang, locale, t } = language(request);
    const title = t(`problem.${kind}`);
    // No query on a URL the router refused before parsing it (a broken %-escape).
    return send(reply, status, embedding((request.query ?? {}) as PageQuery, undefined), {
      title,
      lang,
      locale,
      body: problemView(title, t(`problem.${kind}Text`), t),
    });
  };

  // A page's refusals are pages too, said in words: too many requests, a blocked address (403), a link
  // no page of ours makes (a NUL in it, or any other refusal of the request as sent: 400), or a failure
  // of ours (500).
  const answerError = (error: Error, request: FastifyRequest, reply: FastifyReply) => {
    const code = error instanceof ServiceError ? error.code : undefined;
    if (code === 'rate_limited') return problem(request, reply, 429, 'rateLimited');
    if (code === 'ip_blocked') return problem(request, reply, 403, 'blocked');
    if (code === 'invalid_request') return problem(request, reply, 400, 'broken');
    // A page's URL no route has: a link cut short or changed on its way.
    if (code === 'route_not_found') return problem(request, reply, 404, 'broken');
    const status = code ? undefined : (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500)
      return problem(request, reply, status, 'broken');
    request.log.error({ request_id: request.id, err: error }, 'page failed');
    return problem(request, reply, 500, 'failed');
  };
  app.setErrorHandler(answerError);
  // A page's URL the router refused before any route (a broken %-escape), or that no route has (a link cut
  // short: /s/, /session), is answered as a page too; any other unknown URL keeps the JSON answer of a
  // route that does not exist.
  for (const page of ['/session', '/s']) surfaces.add(`${app.prefix}${page}`, answerError);

  // Pages have the pay-page API's read limit, each page route counted on its own as every limited route
  // is (docs/api.md#rate-limits).
  const read = { rateLimit: { max: config.rateLimits.PAY_READ, timeWindow: 60_000 } };

  app.get('/session/:sessionId', { schema: { hide: true }, config: read }, async (request, reply) => {
    const { sessionId } = request.params as { sessionId: string };
    const query = request.query as PageQuery;
    const access = one(query.access);
    if (!access) {
      return problem(request, reply, 403, 'incomplete');
    }
    const opened = await sessionForToken(deps, access).catch((error: Error) => {
      if (error instanceof ServiceError && error.code === 'invalid_access_token') return undefined;
      throw error;
    });
    if (!opened || opened.session.id !== sessionId) {
      return problem(request, reply, 403, 'invalid');
    }
    const loaded = await loadPayPage(deps, opened);
    const page = payPageToWire(
      loaded.session,
      loaded.members,
      loaded.role,
      loaded.merchantName,
      links,
    ) as PageSession;
    const e = embedding(query, opened.session);
    const ctx = context(request, e, loaded.session, access);
    const t = translator(ctx.messages, ctx.locale);
    const now = deps.clock.now();
    const organizer = page.role === 'organizer';
    return send(reply, 200, e, {
      title: `${organizer ? t('title.organizer') : t('title.group')} · ${page.merchant_name}`,
      lang: ctx.lang,
      locale: ctx.locale,
      body: organizer
        ? organizerView(page, ctx, draftOf(page, ctx.locale), {}, now)
        : groupView(page, ctx, now),
      script: organizer ? 'organizer' : 'group',
      data: { page, ctx },
    });
  });

  app.get('/s/:shareId', { schema: { hide: true }, config: read }, async (request, reply) => {
    const { shareId } = request.params as { shareId: string };
    const loaded = await loadSharePage(deps, shareId).catch((error: Error) => {
      if (error instanceof ServiceError && error.code === 'share_not_found') return undefined;
      throw error;
    });
    if (!loaded) {
      return problem(request, reply, 404, 'noShare');
    }
    const share = shareToWire(
      loaded.session,
      loaded.member,
      loaded.merchantName,
      loaded.attempts,
      loaded.members,
    ) as PageShare;
    const e = embedding(request.query as PageQuery, loaded.session);
    const ctx = context(request, e, loaded.session);
    const t = translator(ctx.messages, ctx.locale);
    return send(reply, 200, e, {
      title: `${t('title.share')} · ${share.merchant_name}`,
      lang: ctx.lang,
      locale: ctx.locale,
      body: shareView(share, ctx, deps.clock.now()),
      script: 'share',
      data: { share, ctx },
    });
  });

  app.get('/assets/:name', { schema: { hide: true }, config: { public: true } }, (request, reply) => {
    const asset = assets.byName.get((request.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('No such file.');
    reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.contentType);
    return sendCompressed(request, reply, asset);
  });
  // Apple Pay's domain check (docs/operations.md#stripe-set-up): the file Stripe's dashboard gives, as is.
  const applePay = config.applePayDomainAssociation;
  if (applePay)
    app.get('/.well-known/apple-developer-merchantid-domain-association', (_request, reply) =>
      reply.type('text/plain').header('cache-control', 'public, max-age=3600').send(applePay),
    );
  registerSdkAssets(app, { pay: deps.config.publicPayUrl, api: deps.config.publicBaseUrl });
}
