// First start of the sandbox on an empty database: create a demo merchant and print what a developer
// needs to try the API. Secrets go to the terminal once, never to the log.
import type { Deps } from './deps.ts';
import { countMerchants, createMerchant } from './flows/merchants.ts';

export async function ensureDemoMerchant(deps: Deps): Promise<void> {
  const { config } = deps;
  if (config.serviceEnv !== 'sandbox') return;
  if ((await countMerchants(deps.db)) > 0) return;
  const payOrigin = new URL(config.publicPayUrl).origin;
  const created = await createMerchant(
    deps.db,
    {
      name: 'Demo Shop',
      environment: 'test',
      headlessApiEnabled: true,
      payoutCurrency: null,
      allowedOrigins: [payOrigin],
    },
    deps.clock.now(),
  );
  const m = created.merchant;
  process.stdout.write(
    [
      '',
      'Group Checkout sandbox: created a demo merchant (shown once; keep these).',
      `  merchant id              ${m.id}`,
      `  publishable key          ${created.publishableKey}`,
      `  secret key               ${created.secretKey}`,
      `  cart signing secret      ${m.signingSecret}`,
      `  session webhook secret   ${m.sessionWebhookSecret}`,
      `  API                      ${config.publicBaseUrl}`,
      `  OpenAPI                  ${config.publicBaseUrl}/openapi.json`,
      `  hosted pages             ${config.publicPayUrl}`,
      `Lost the secret key? npx group-checkout merchant keys roll --merchant ${m.id}`,
      '',
      '',
    ].join('\n'),
  );
}
