// group-checkout merchant update: the merchant's processor account (Stripe Connect).
import { parseArgs } from 'node:util';
import { setProcessorAccount } from '../flows/merchants.ts';
import { type Command, print, UsageError, withDb } from './command.ts';

/** A Stripe connected account id: acct_ and 16 letters or digits today; up to 255 characters allowed. */
const PROCESSOR_ACCOUNT = /^acct_[A-Za-z0-9]{8,250}$/;

export const merchantUpdate: Command = {
  name: 'merchant update',
  usage: '--merchant ID --processor-account acct_… [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        'processor-account': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant update needs --merchant ID');
    const account = values['processor-account'];
    if (account === undefined) throw new UsageError('merchant update needs --processor-account acct_…');
    if (!PROCESSOR_ACCOUNT.test(account)) {
      throw new UsageError(
        `--processor-account must be a Stripe connected account id such as acct_1Nv0FGQ9RKHgCVdK, got "${account.slice(0, 80)}"`,
      );
    }
    const merchantId = values.merchant;
    await withDb(config, async (db) => {
      if (!(await setProcessorAccount(db, merchantId, account)))
        throw new UsageError(`no merchant ${merchantId}`);
      print(values.json ?? false, { merchant_id: merchantId, processor_account_id: account }, [
        `processor account for ${merchantId}: ${account}`,
      ]);
    });
  },
};
