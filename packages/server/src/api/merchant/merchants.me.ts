// GET /merchants/me — the authenticated merchant's profile (docs/api.md#merchant-profile).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { formatRate } from '../../domain/money.ts';
import { sendKept } from '../answer-bytes.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const MerchantProfile = Type.Object({
  id: Type.String({ description: 'Merchant id (svc_merch_…).' }),
  name: Type.String(),
  sandbox: Type.Boolean({ description: 'True for a sandbox (test-mode) merchant.' }),
  merchant_fee_rate: Type.Number({ description: 'Fraction of each cart total taken as the merchant fee.' }),
  consumer_fee_rate: Type.Number({ description: 'Fraction added to each payer share.' }),
  fx_fee_rate: Type.Number({ description: 'Foreign-exchange fee rate in preferred payout mode.' }),
  processor_connected: Type.Boolean({ description: 'Whether a payment processor account is connected.' }),
  headless_api_enabled: Type.Boolean(),
  payout_currency: Type.Object({
    mode: Type.Union([Type.Literal('checkout'), Type.Literal('preferred')]),
    currency: Type.Union([Type.String(), Type.Null()]),
  }),
  allowed_origins: Type.Array(Type.String(), {
    description: 'Origins that may embed the hosted pages of server-created sessions (--allowed-origin).',
  }),
});

export function register(app: App, deps: Deps) {
  app.get(
    '/merchants/me',
    {
      schema: {
        summary: 'The authenticated merchant',
        tags: ['merchants'],
        response: responses(MerchantProfile, AUTH_ERRORS),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'MERCHANTS_ME') },
    },
    async (request, reply) => {
      const m = callerOf(request).merchant;
      // The merchant as the key's cached read holds it: serialized once per read (api/answer-bytes.ts).
      const source = { value: m, variant: 'profile', cached: deps.db.dialect === 'sqlite' };
      return sendKept(request, reply, source, () => ({
        id: m.id,
        name: m.name,
        sandbox: m.environment === 'test',
        merchant_fee_rate: formatRate(m.merchantFeePpm),
        consumer_fee_rate: formatRate(m.consumerFeePpm),
        fx_fee_rate: formatRate(m.fxFeePpm),
        // Connected once the merchant has an account at the processor for payouts (set with the CLI). The
        // sandbox processor simulates payouts without one (docs/decisions.md#processor-connected).
        processor_connected: m.processorAccountId !== null,
        headless_api_enabled: m.headlessApiEnabled,
        payout_currency: { mode: m.payoutMode, currency: m.payoutCurrency },
        allowed_origins: m.allowedOrigins,
      }));
    },
  );
}
