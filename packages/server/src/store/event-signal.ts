// Waking the webhook dispatcher when an event commits (docs/architecture.md#webhook-delivery), so that a
// new event reaches its receiver at once rather than at the next poll.
//
// On PostgreSQL the transaction that writes an event also sends NOTIFY, which PostgreSQL delivers when
// (and only if) it commits, to every process that LISTENs, this one included. On SQLite only this
// process can write while it runs the dispatcher, and Kysely runs one statement at a time on its one
// connection: the wake is sent on the next turn of the event loop, and the dispatcher's read queues
// behind the writing transaction, so it sees the commit. A wake that finds nothing (a rollback) is
// harmless; the dispatcher's poll covers anything missed.
import { EventEmitter } from 'node:events';
import { sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

const CHANNEL = 'group_checkout_events';
const RECONNECT_MS = 1000;

export interface EventSignal {
  /**
   * On PostgreSQL the channel to NOTIFY: a statement that writes an event may send it itself (store/events.ts
   * insertSessionEvent) instead of a select pg_notify of its own. Undefined where the signal is no statement.
   */
  readonly notifyChannel: string | undefined;
  /** Called inside a transaction that wrote events: listeners hear of it once it commits. */
  announce(trx: Transaction<Database>): Promise<void>;
  /** Calls `listener` whenever events commit (on PostgreSQL, in any process); answers how to stop. */
  listen(listener: () => void, onError?: (error: Error) => void): Promise<() => Promise<void>>;
}

export function sqliteEventSignal(): EventSignal {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    notifyChannel: undefined,
    async announce() {
      setImmediate(() => emitter.emit('written'));
    },
    async listen(listener) {
      emitter.on('written', listener);
      return async () => {
        emitter.off('written', listener);
      };
    },
  };
}

export function postgresEventSignal(databaseUrl: string): EventSignal {
  return {
    notifyChannel: CHANNEL,
    async announce(trx) {
      await sql`select pg_notify(${CHANNEL}, '')`.execute(trx);
    },
    async listen(listener, onError) {
      let client: pg.Client | undefined;
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      const connect = async () => {
        const next = new pg.Client({ connectionString: databaseUrl });
        let gone = false;
        const lost = (error?: Error) => {
          // A dropped connection says so twice ('error', then 'end'): reconnect once.
          if (gone) return;
          gone = true;
          if (error) onError?.(error);
          next.removeAllListeners();
          next.on('error', () => undefined);
          next.end().catch(() => undefined);
          if (client === next) client = undefined;
          // While disconnected the dispatcher's poll carries on; a wake after reconnecting catches up.
          if (!stopped) retry = setTimeout(() => void connect(), RECONNECT_MS);
        };
        next.on('error', lost);
        next.on('end', () => lost());
        next.on('notification', () => listener());
        try {
          await next.connect();
          await next.query(`listen ${CHANNEL}`);
          if (stopped) {
            await next.end();
            return;
          }
          client = next;
          listener();
        } catch (error) {
          lost(error as Error);
        }
      };
      await connect();
      return async () => {
        stopped = true;
        clearTimeout(retry);
        const open = client;
        client = undefined;
        if (open) {
          open.removeAllListeners();
          open.on('error', () => undefined);
          await open.end().catch(() => undefined);
        }
      };
    },
  };
}
