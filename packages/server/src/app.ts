// buildApp(deps): the whole HTTP surface on one Fastify instance, which never listens by itself
// (main.ts does), so tests drive it through inject() or a port of their choosing. What every request
// goes through is in http/, one part a file; the three surfaces are encapsulated plugins.
import Fastify, { type RouteOptions } from 'fastify';
import type { AuthRequirement } from './api/auth.ts';
import { answerClientError } from './api/errors.ts';
import * as health from './api/health.ts';
import { merchantApi } from './api/merchant/index.ts';
import { payApi } from './api/pay/index.ts';
import { stripeWebhooks } from './api/stripe/index.ts';
import type { App } from './app-type.ts';
import { merchantDashboard } from './dashboard/index.ts';
import type { Deps } from './deps.ts';
import { baseHeaders } from './http/base-headers.ts';
import { limitConnectionsPerClient } from './http/connection-limit.ts';
import { errorHandlers, routerErrorAnswer, Surfaces } from './http/error-handlers.ts';
import { jsonBodies } from './http/json-body.ts';
import { refuseNullBodies } from './http/no-body.ts';
import { openApiDocument } from './http/openapi.ts';
import { rateLimits } from './http/rate-limit.ts';
import { refuseBeforeRoute } from './http/refused-before-route.ts';
import { requestIdInAnswers, requestIdOptions } from './http/request-id.ts';
import { RequestLog } from './http/request-log.ts';
import { slowClientOptions } from './http/slow-clients.ts';
import { schemaValidation } from './http/validation.ts';
import { hostedPages } from './pages/index.ts';

const BODY_LIMIT_BYTES = 256 * 1024;

export interface BuildOptions {
  /** Hears of every route as it is registered, before any plugin changes it (tests list routes with it). */
  onRoute?: (route: RouteOptions) => void;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<App> {
  const { config } = deps;
  const surfaces = new Surfaces();
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new RequestLog(),
    // No child logger per request (pino's child() costs on every request): the few lines we log name
    // their request_id themselves.
    childLoggerFactory: (logger) => logger,
    ...requestIdOptions,
    trustProxy: config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    ...slowClientOptions(config),
    clientErrorHandler: answerClientError,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: routerErrorAnswer(surfaces),
  }) as unknown as App;
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  limitConnectionsPerClient(app, config);
  jsonBodies(app);
  schemaValidation(app);
  baseHeaders(app);
  refuseNullBodies(app);
  refuseBeforeRoute(app, deps);
  requestIdInAnswers(app);
  errorHandlers(app, deps, surfaces);
  await rateLimits(app, deps);
  await openApiDocument(app, config);

  // Each HTTP surface is an encapsulated plugin with its own hooks (docs/architecture.md).
  health.register(app, deps);
  await app.register(merchantApi, { prefix: config.apiPrefix, deps });
  await app.register(stripeWebhooks, { prefix: `${config.apiPrefix}/stripe`, deps });
  await app.register(payApi, { prefix: `${config.payPrefix}/api/v1`, deps });
  await app.register(hostedPages, { prefix: config.payPrefix, deps, surfaces });
  await app.register(merchantDashboard, { prefix: `${config.payPrefix}/dashboard`, deps, surfaces });
  return app;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Health probes and documents that answer even to blocked addresses. */
    public?: boolean;
    /** The API key a merchant API route needs (api/auth.ts). */
    auth?: AuthRequirement;
  }
}
