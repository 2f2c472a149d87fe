// group-checkout merchant create: a merchant with its keys and secrets, printed once.
import { parseArgs } from 'node:util';
import { isCurrencyCode } from '../domain/currencies.ts';
import { createMerchant } from '../flows/merchants.ts';
import { keyEnvironmentFor } from '../ids.ts';
import { type Command, originArgument, print, UsageError, withDb } from './command.ts';

export const merchantCreate: Command = {
  name: 'merchant create',
  usage: '--name NAME [--headless] [--payout-currency CUR] [--allowed-origin ORIGIN]… [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string' },
        headless: { type: 'boolean', default: false },
        'payout-currency': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const name = values.name?.trim();
    if (!name) throw new UsageError('merchant create needs --name NAME');
    if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
    const payoutCurrency = values['payout-currency']?.toLowerCase() ?? null;
    if (payoutCurrency !== null && !isCurrencyCode(payoutCurrency)) {
      throw new UsageError(
        `--payout-currency must be an ISO 4217 code such as eur, got "${values['payout-currency']}"`,
      );
    }
    const allowedOrigins = [
      ...new Set((values['allowed-origin'] ?? []).map((raw) => originArgument(raw, config.serviceEnv))),
    ];
    await withDb(config, async (db) => {
      const environment = keyEnvironmentFor(config.serviceEnv);
      const { merchant, publishableKey, secretKey } = await createMerchant(
        db,
        { name, environment, headlessApiEnabled: values.headless ?? false, payoutCurrency, allowedOrigins },
        Date.now(),
      );
      print(
        values.json ?? false,
        {
          merchant_id: merchant.id,
          publishable_key: publishableKey,
          secret_key: secretKey,
          signing_secret: merchant.signingSecret,
          session_webhook_secret: merchant.sessionWebhookSecret,
          environment: config.serviceEnv,
        },
        [
          `merchant id              ${merchant.id}`,
          `environment              ${config.serviceEnv}`,
          `publishable key          ${publishableKey}`,
          `secret key               ${secretKey}   (shown once)`,
          `cart signing secret      ${merchant.signingSecret}`,
          `session webhook secret   ${merchant.sessionWebhookSecret}`,
        ],
      );
    });
  },
};
