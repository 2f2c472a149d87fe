// The merchant's own settings from the dashboard (docs/dashboard.md#pages): its name, shown to payers on the
// hosted pages and in mail, and its payout currency (null: each session's currency), with the rules
// `group-checkout merchant create` applies to them.
import type { Deps } from '../deps.ts';
import { isCurrencyCode } from '../domain/currencies.ts';
import { ServiceError } from '../errors.ts';
import { updateMerchantSettings } from '../store/dashboard.ts';

const invalid = (message: string) => new ServiceError('invalid_request', { message, details: [message] });

export async function renameMerchant(deps: Deps, merchantId: string, name: string): Promise<void> {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) throw invalid('The name must be 1 to 200 characters.');
  await updateMerchantSettings(deps.db.kysely, merchantId, { name: trimmed });
}

export async function setPayoutCurrency(deps: Deps, merchantId: string, currency: string): Promise<void> {
  const code = currency.trim().toLowerCase();
  if (code !== '' && !isCurrencyCode(code))
    throw invalid(
      'The payout currency must be an ISO 4217 code such as eur, or empty for each session’s own.',
    );
  await updateMerchantSettings(deps.db.kysely, merchantId, { payoutCurrency: code || null });
}
