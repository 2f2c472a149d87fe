// group-checkout secrets rotate: reseals every stored secret with SECRETS_KEY (docs/operations.md).
import { rotateSecrets } from '../flows/secrets.ts';
import { type Command, jsonFlag, print, UsageError, withDb } from './command.ts';

export const secretsRotate: Command = {
  name: 'secrets rotate',
  usage: '[--json]',
  async run(args, config) {
    const json = jsonFlag(args);
    if (!config.secretsKey) throw new UsageError('secrets rotate needs SECRETS_KEY: the key to seal with');
    await withDb(config, async (db) => {
      const { resealed, remaining, keyId } = await rotateSecrets(db);
      print(json, { resealed, remaining, key_id: keyId }, [
        `resealed ${resealed} stored secrets with SECRETS_KEY (key ${keyId})`,
        remaining === 0
          ? 'every stored secret is sealed with SECRETS_KEY: SECRETS_KEY_PREVIOUS may be removed'
          : `${remaining} were written meanwhile with another key: run secrets rotate again`,
      ]);
    });
  },
};
