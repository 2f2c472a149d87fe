// group-checkout merchant create: a merchant with its keys and secrets, printed once.
import { parseArgs } from 'node:util';
import { isCurrencyCode } from '../domain/currencies.ts';
import { addDashboardUser, normalEmail } from '../flows/dashboard-access.ts';
import { createMerchant, merchantNameProblem } from '../flows/merchants.ts';
import { keyEnvironmentFor } from '../ids.ts';
import { type Command, originArgument, print, UsageError, withDb } from './command.ts';

export const merchantCreate: Command = {
  name: 'merchant create',
  usage:
    '--name NAME [--email OWNER] [--headless] [--payout-currency CUR] [--allowed-origin ORIGIN]… [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string' },
        email: { type: 'string' },
        headless: { type: 'boolean', default: false },
        'payout-currency': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const name = values.name?.trim();
    if (!name) throw new UsageError('merchant create needs --name NAME');
    const problem = merchantNameProblem(name);
    if (problem) throw new UsageError(`--name: ${problem}`);
    const payoutCurrency = values['payout-currency']?.toLowerCase() ?? null;
    if (payoutCurrency !== null && !isCurrencyCode(payoutCurrency)) {
      throw new UsageError(
        `--payout-currency must be an ISO 4217 code such as eur, got "${values['payout-currency']}"`,
      );
    }
    const allowedOrigins = [
      ...new Set((values['allowed-origin'] ?? []).map((raw) => originArgument(raw, config.serviceEnv))),
    ];
    const ownerEmail = values.email === undefined ? undefined : normalEmail(values.email);
    if (values.email !== undefined && !ownerEmail)
      throw new UsageError(`--email must be an address such as ana@shop.example, got "${values.email}"`);
    await withDb(config, async (db) => {
      const environment = keyEnvironmentFor(config.serviceEnv);
      const { merchant, publishableKey, secretKey } = await createMerchant(
        db,
        { name, environment, headlessApiEnabled: values.headless ?? false, payoutCurrency, allowedOrigins },
        Date.now(),
      );
      // The dashboard's first owner: signs in with a link from `group-checkout dashboard link`.
      if (ownerEmail)
        await addDashboardUser(db, { merchantId: merchant.id, email: ownerEmail, role: 'owner' }, Date.now());
      print(
        values.json ?? false,
        {
          merchant_id: merchant.id,
          publishable_key: publishableKey,
          secret_key: secretKey,
          signing_secret: merchant.signingSecret,
          session_webhook_secret: merchant.sessionWebhookSecret,
          environment: config.serviceEnv,
          ...(ownerEmail ? { dashboard_owner: ownerEmail } : {}),
        },
        [
          `merchant id              ${merchant.id}`,
          `environment              ${config.serviceEnv}`,
          `publishable key          ${publishableKey}`,
          `secret key               ${secretKey}   (shown once)`,
          `cart signing secret      ${merchant.signingSecret}`,
          `session webhook secret   ${merchant.sessionWebhookSecret}`,
          ...(ownerEmail
            ? [
                `dashboard owner          ${ownerEmail}  (sign-in link: group-checkout dashboard link --merchant ${merchant.id})`,
              ]
            : []),
        ],
      );
    });
  },
};
