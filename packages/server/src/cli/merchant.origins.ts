// group-checkout merchant origins: lists the origins a merchant's pages may create browser sessions from
// (docs/api.md#origins); `merchant update --allowed-origin / --remove-allowed-origin` changes them.
import { parseArgs } from 'node:util';
import { allowedOriginsOf } from '../flows/merchants.ts';
import { type Command, print, UsageError, withDb } from './command.ts';

export const merchantOrigins: Command = {
  name: 'merchant origins',
  usage: '--merchant ID [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: { merchant: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant origins needs --merchant ID');
    const merchantId = values.merchant;
    await withDb(config, async (db) => {
      const origins = await allowedOriginsOf(db, merchantId);
      if (!origins) throw new UsageError(`no merchant ${merchantId}`);
      const none =
        config.serviceEnv === 'production'
          ? '(none registered: browser sessions are refused until one is)'
          : '(none registered: the sandbox takes any well-formed origin until one is)';
      print(values.json ?? false, { merchant_id: merchantId, allowed_origins: origins }, [
        `allowed origins for ${merchantId}:`,
        ...(origins.length > 0 ? origins.map((o) => `  ${o}`) : [`  ${none}`]),
      ]);
    });
  },
};
