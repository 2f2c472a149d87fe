// group-checkout merchant keys roll: a new secret key (the old one ends at once), or a new cart signing
// secret, session webhook secret or publishable key, the old one working for the grace period.
import { parseArgs } from 'node:util';
import { type Rolled, rollMerchantSecret, rollPublishableKey, rollSecretKey } from '../flows/merchants.ts';
import type { Db } from '../store/db.ts';
import { type Command, print, UsageError, withDb } from './command.ts';

/** What `merchant keys roll` replaces with a grace period for the old one (docs/operations.md#keys). */
const GRACEFUL_ROLLS: Record<
  'signing-secret' | 'webhook-secret' | 'publishable',
  {
    roll: (db: Db, merchantId: string, now: number) => Promise<Rolled | undefined>;
    field: string;
    name: string;
    oldOne: string;
  }
> = {
  'signing-secret': {
    roll: (db, merchantId, now) => rollMerchantSecret(db, merchantId, 'signing', now),
    field: 'signing_secret',
    name: 'cart signing secret',
    oldOne: 'still verifies carts',
  },
  'webhook-secret': {
    roll: (db, merchantId, now) => rollMerchantSecret(db, merchantId, 'session_webhook', now),
    field: 'session_webhook_secret',
    name: 'session webhook secret',
    oldOne: 'signs webhooks too',
  },
  publishable: {
    roll: rollPublishableKey,
    field: 'publishable_key',
    name: 'publishable key',
    oldOne: 'still works',
  },
};

export const merchantKeysRoll: Command = {
  name: 'merchant keys roll',
  usage: '--merchant ID [--signing-secret | --webhook-secret | --publishable] [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        'signing-secret': { type: 'boolean', default: false },
        'webhook-secret': { type: 'boolean', default: false },
        publishable: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant keys roll needs --merchant ID');
    const merchantId = values.merchant;
    const chosen = (Object.keys(GRACEFUL_ROLLS) as (keyof typeof GRACEFUL_ROLLS)[]).filter(
      (flag) => values[flag],
    );
    if (chosen.length > 1) {
      throw new UsageError(
        'merchant keys roll takes one of --signing-secret, --webhook-secret, --publishable',
      );
    }
    const json = values.json ?? false;
    await withDb(config, async (db) => {
      const now = Date.now();
      const what = chosen[0];
      if (what === undefined) {
        const rolled = await rollSecretKey(db, merchantId, now);
        if (!rolled) throw new UsageError(`no merchant ${merchantId}`);
        print(json, { merchant_id: merchantId, secret_key: rolled.secretKey }, [
          `new secret key for ${merchantId}: ${rolled.secretKey}   (shown once; the old one no longer works)`,
        ]);
        return;
      }
      const { roll, field, name, oldOne } = GRACEFUL_ROLLS[what];
      const rolled = await roll(db, merchantId, now);
      if (!rolled) throw new UsageError(`no merchant ${merchantId}`);
      const until = new Date(rolled.previousValidUntil).toISOString();
      print(json, { merchant_id: merchantId, [field]: rolled.value, previous_valid_until: until }, [
        `new ${name} for ${merchantId}: ${rolled.value}`,
        `the old one ${oldOne} until ${until}`,
      ]);
    });
  },
};
