// The merchant's own settings from the dashboard (docs/dashboard.md#pages): its name, shown to payers on the
// hosted pages and in mail, and its payout currency (null: each session's currency), with the rules
// `group-checkout merchant create` applies to them; and, with Stripe, the Connect onboarding link.
import type { Deps } from '../deps.ts';
import { isCurrencyCode } from '../domain/currencies.ts';
import { ServiceError } from '../errors.ts';
import type { OnboardingLink } from '../processor/types.ts';
import { updateMerchantSettings } from '../store/dashboard.ts';
import { findMerchantById, setProcessorAccountIfNone } from '../store/merchants.ts';
import { merchantNameProblem } from './merchants.ts';

const invalid = (message: string) => new ServiceError('invalid_request', { message, details: [message] });

export async function renameMerchant(deps: Deps, merchantId: string, name: string): Promise<void> {
  const problem = merchantNameProblem(name);
  if (problem) throw invalid(problem);
  await updateMerchantSettings(deps.db.kysely, merchantId, { name: name.trim() });
}

export async function setPayoutCurrency(deps: Deps, merchantId: string, currency: string): Promise<void> {
  const code = currency.trim().toLowerCase();
  if (code !== '' && !isCurrencyCode(code))
    throw invalid(
      'The payout currency must be an ISO 4217 code such as eur, or empty for each session’s own.',
    );
  await updateMerchantSettings(deps.db.kysely, merchantId, { payoutCurrency: code || null });
}

/**
 * A Stripe Connect onboarding link for the merchant (docs/dashboard.md#payouts-with-stripe): its connected
 * account is made first when it has none, and kept as the merchant's processor account (unless an operator
 * set one meanwhile), so transfers go to it once Stripe has enabled it. Refused in the sandbox.
 */
export async function startPayoutOnboarding(deps: Deps, merchantId: string): Promise<OnboardingLink> {
  const { processor } = deps;
  if (!processor.connectOnboarding)
    throw invalid('The sandbox moves no real money: there is no payout account to connect.');
  const merchant = await findMerchantById(deps.db.kysely, deps.db.secrets, merchantId);
  if (!merchant) throw new ServiceError('route_not_found');
  const pages = `${deps.config.publicPayUrl}/dashboard/payouts`;
  let link: OnboardingLink;
  try {
    link = await processor.connectOnboarding({
      merchantId,
      accountId: merchant.processorAccountId,
      returnUrl: `${pages}/return`,
      refreshUrl: `${pages}/refresh`,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ merchant_id: merchantId, err: reason }, 'Stripe onboarding link failed');
    throw new ServiceError('upstream_error', {
      message: `Stripe did not make an onboarding link (${reason}). Try again in a moment.`,
    });
  }
  if (merchant.processorAccountId === null)
    await setProcessorAccountIfNone(deps.db.kysely, merchantId, link.accountId);
  return link;
}
