// group-checkout: serve, migrate, merchant administration, secrets rotation, reconcile and listen. Uses the
// same DATABASE_URL, SERVICE_ENV and SECRETS_KEY as the server. An error prints one line to stderr and
// exits non-zero. One file per command; a new command is its file and a line in COMMANDS.
import { ConfigError, loadConfig } from '../config.ts';
import { type Command, SaidOnStdout, UsageError } from './command.ts';
import { listen } from './listen.ts';
import { merchantCreate } from './merchant.create.ts';
import { merchantKeysRoll } from './merchant.keys.roll.ts';
import { merchantOrigins } from './merchant.origins.ts';
import { merchantUpdate } from './merchant.update.ts';
import { migrate } from './migrate.ts';
import { reconcile } from './reconcile.ts';
import { secretsRotate } from './secrets.rotate.ts';
import { serve } from './serve.ts';

/** Every command, in the order --help lists them. */
const COMMANDS: readonly Command[] = [
  serve,
  migrate,
  merchantCreate,
  merchantUpdate,
  merchantOrigins,
  merchantKeysRoll,
  secretsRotate,
  reconcile,
  listen,
];

const USAGE = [
  'Usage:',
  ...COMMANDS.map((c) => `  group-checkout ${c.name}${c.usage ? ` ${c.usage}` : ''}`),
].join('\n');

/** The command `argv` names (its words first), and the arguments after those words. */
function find(argv: string[]): { command: Command; args: string[] } | undefined {
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    if (words.every((word, i) => argv[i] === word)) return { command, args: argv.slice(words.length) };
  }
  return undefined;
}

async function run(argv: string[]): Promise<void> {
  const [first] = argv;
  if (first === 'help' || first === '--help' || first === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!first) throw new UsageError('no command given; run group-checkout --help for the commands');
  const found = find(argv);
  if (found?.command.config === false) return found.command.run(found.args);
  const config = loadConfig();
  if (!found) {
    throw new UsageError(`unknown command "${argv.join(' ')}"; run group-checkout --help for the commands`);
  }
  return found.command.run(found.args, config);
}

/** One line, whatever the error: AggregateError (a refused connection to every address) has no message. */
function describe(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
  let message = typeof e?.message === 'string' ? e.message : '';
  if (!message && Array.isArray(e?.errors) && e.errors.length > 0) message = describe(e.errors[0]);
  if (!message) message = typeof e?.code === 'string' ? e.code : String(error);
  return message.trim().replace(/\s*\n\s*/g, ' / ');
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof SaidOnStdout) process.exit(1);
  const known =
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const message = describe(error);
  process.stderr.write(`group-checkout: ${known ? message : `failed: ${message}`}\n`);
  process.exit(known ? 2 : 1);
}
