// group-checkout merchant update: the merchant's processor account (Stripe Connect), and the origins its
// pages create browser sessions from (docs/api.md#origins): --allowed-origin registers one,
// --remove-allowed-origin unregisters one, each repeatable.
import { parseArgs } from 'node:util';
import { changeAllowedOrigins, setProcessorAccount } from '../flows/merchants.ts';
import { type Command, originArgument, print, UsageError, withDb } from './command.ts';

/** A Stripe connected account id: acct_ and 16 letters or digits today; up to 255 characters allowed. */
const PROCESSOR_ACCOUNT = /^acct_[A-Za-z0-9]{8,250}$/;

export const merchantUpdate: Command = {
  name: 'merchant update',
  usage:
    '--merchant ID [--processor-account acct_…] [--allowed-origin ORIGIN]… [--remove-allowed-origin ORIGIN]… [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        'processor-account': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true, default: [] },
        'remove-allowed-origin': { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant update needs --merchant ID');
    const account = values['processor-account'];
    const add = (values['allowed-origin'] ?? []).map((raw) => originArgument(raw, config.serviceEnv));
    // An origin to remove is matched as stored, typed or canonical (flows/merchants.ts changeAllowedOrigins),
    // whatever the environment, so that a sandbox-only origin can be taken out too.
    const remove = values['remove-allowed-origin'] ?? [];
    if (account === undefined && add.length === 0 && remove.length === 0) {
      throw new UsageError(
        'merchant update needs --processor-account acct_…, --allowed-origin ORIGIN or --remove-allowed-origin ORIGIN',
      );
    }
    if (account !== undefined && !PROCESSOR_ACCOUNT.test(account)) {
      throw new UsageError(
        `--processor-account must be a Stripe connected account id such as acct_1Nv0FGQ9RKHgCVdK, got "${account.slice(0, 80)}"`,
      );
    }
    const merchantId = values.merchant;
    await withDb(config, async (db) => {
      const answer: Record<string, unknown> = { merchant_id: merchantId };
      const lines: string[] = [];
      if (add.length > 0 || remove.length > 0) {
        const changed = await changeAllowedOrigins(
          db,
          merchantId,
          { add, remove },
          { removeOnlyRegistered: true },
        );
        if (!changed) throw new UsageError(`no merchant ${merchantId}`);
        // As the dashboard says it: an origin that is not registered is named, and nothing changes.
        if (changed.unregistered.length > 0)
          throw new UsageError(
            `${changed.unregistered.map((o) => o.slice(0, 255)).join(', ')} ${changed.unregistered.length > 1 ? 'are' : 'is'} not registered for ${merchantId}, so nothing was changed; registered: ${changed.origins.join(' ') || '(none)'}`,
          );
        const { origins } = changed;
        answer.allowed_origins = origins;
        lines.push(`allowed origins for ${merchantId}: ${origins.length > 0 ? origins.join(' ') : '(none)'}`);
      }
      if (account !== undefined) {
        if (!(await setProcessorAccount(db, merchantId, account)))
          throw new UsageError(`no merchant ${merchantId}`);
        answer.processor_account_id = account;
        lines.push(`processor account for ${merchantId}: ${account}`);
      }
      print(values.json ?? false, answer, lines);
    });
  },
};
