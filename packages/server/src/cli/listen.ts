// group-checkout listen: forwards a merchant's events to a URL on the developer's machine
// (cli/forward-events.ts), after checking its flags.
import { parseArgs } from 'node:util';
import { EVENT_TYPES } from '../domain/event-types.ts';
import { type Command, UsageError } from './command.ts';
import { forwardEvents } from './forward-events.ts';

export const listen: Command = {
  name: 'listen',
  usage:
    '--forward-to URL [--api-key svc_sk_…] [--api-base URL] [--events TYPE,…] [--secret whsec_…] [--json]',
  // A client of the API, like a merchant's server: it needs a key and an address, no database.
  config: false,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        'forward-to': { type: 'string' },
        'api-key': { type: 'string' },
        'api-base': { type: 'string' },
        events: { type: 'string' },
        secret: { type: 'string' },
        'interval-ms': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const forwardTo = values['forward-to'];
    if (!forwardTo)
      throw new UsageError('listen needs --forward-to URL, such as http://localhost:3000/hooks');
    if (!/^https?:\/\/./.test(forwardTo))
      throw new UsageError(`--forward-to must be an http(s) URL, got "${forwardTo}"`);
    const apiKey = values['api-key'] ?? process.env.GROUP_CHECKOUT_API_KEY;
    if (!apiKey?.startsWith('svc_sk_'))
      throw new UsageError(
        "listen needs the merchant's secret key (svc_sk_…): --api-key or GROUP_CHECKOUT_API_KEY",
      );
    const apiBase =
      values['api-base'] ??
      process.env.GROUP_CHECKOUT_API_BASE ??
      process.env.PUBLIC_BASE_URL ??
      // The server's own default: its PORT on this machine (README.md#configuration).
      `http://localhost:${/^\d+$/.test(process.env.PORT ?? '') ? process.env.PORT : '4000'}/v1`;
    const events = (values.events ?? '').split(',').filter(Boolean);
    const unknown = events.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0)
      throw new UsageError(
        `--events: unknown event type ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`,
      );
    if (values.secret !== undefined && !/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(values.secret))
      throw new UsageError('--secret must be a whsec_… secret');
    const intervalMs = Number(values['interval-ms'] ?? 1000);
    if (!Number.isInteger(intervalMs) || intervalMs < 100 || intervalMs > 60_000)
      throw new UsageError('--interval-ms must be a whole number from 100 to 60000');
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    await forwardEvents({
      apiKey,
      apiBase,
      forwardTo,
      events,
      secret: values.secret,
      intervalMs,
      json: values.json,
      signal: stop.signal,
      out: (line) => process.stdout.write(`${line}\n`),
    });
  },
};
