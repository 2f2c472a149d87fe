// group-checkout dashboard link: a one-time sign-in link to the merchant dashboard (docs/dashboard.md), for
// the merchant's owner or a named user, printed rather than mailed: for operators and tests.
import { parseArgs } from 'node:util';
import { issueSignInLink, SIGN_IN_LINK_TTL_MS, userForLink } from '../flows/dashboard-access.ts';
import { findMerchantById } from '../store/merchants.ts';
import { type Command, print, UsageError, withDb } from './command.ts';

export const dashboardLink: Command = {
  name: 'dashboard link',
  usage: '--merchant ID [--email ADDRESS] [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        email: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('dashboard link needs --merchant ID');
    const merchantId = values.merchant;
    await withDb(config, async (db) => {
      const user = await userForLink(db, merchantId, values.email);
      if (!user && !(await findMerchantById(db.kysely, db.secrets, merchantId)))
        throw new UsageError(`no merchant ${merchantId}`);
      if (!user) {
        throw new UsageError(
          values.email
            ? `no dashboard user ${values.email} at merchant ${merchantId}`
            : `merchant ${merchantId} has no dashboard owner; create one with merchant create --email, or name --email`,
        );
      }
      const now = Date.now();
      const url = await issueSignInLink(db, config.publicPayUrl, user.id, now);
      const expiresAt = new Date(now + SIGN_IN_LINK_TTL_MS).toISOString();
      print(values.json ?? false, { url, email: user.email, role: user.role, expires_at: expiresAt }, [
        `dashboard sign-in link for ${user.email} (${user.role}), works once until ${expiresAt}:`,
        url,
      ]);
    });
  },
};
