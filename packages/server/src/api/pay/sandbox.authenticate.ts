// POST {pay_url}/api/v1/sandbox/authenticate — sandbox only: completes or fails the authentication step
// (3-D Secure) of a payment made with card 4000002500003155, as the payer's bank would; the page then
// calls refresh (docs/api.md#3-d-secure). Not registered in production (404 like any unknown route).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { authenticateInSandbox } from '../../flows/sandbox-helpers.ts';
import { rateLimitConfig } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  if (deps.config.serviceEnv !== 'sandbox') return;
  app.post(
    '/sandbox/authenticate',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            client_secret: Type.String({ minLength: 1, maxLength: 255 }),
            outcome: Type.Union([Type.Literal('succeed'), Type.Literal('fail')]),
          },
          { additionalProperties: false },
        ),
      },
      config: rateLimitConfig(deps, 'PAY_WRITE'),
    },
    async (request) => {
      await authenticateInSandbox(deps, request.body.client_secret, request.body.outcome);
      return { authenticated: request.body.outcome === 'succeed' };
    },
  );
}
