// At most MAX_CONNECTIONS_PER_IP open connections per client address (the socket's: behind a proxy, the
// proxy's; set MAX_CONNECTIONS_PER_IP=0 there). One more is answered 429 on the socket and closed, so
// that one client cannot use up the server's connections while others wait.
import type { Socket } from 'node:net';
import { clientNetwork } from '../api/auth.ts';
import { answerOnSocket } from '../api/errors.ts';
import type { App } from '../app-type.ts';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';

export function limitConnectionsPerClient(app: App, config: Config) {
  const max = config.maxConnectionsPerIp;
  if (max <= 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    // Counted per client network, as the rate limits count (an IPv6 /64 is one client).
    const client = clientNetwork(socket.remoteAddress ?? '');
    const count = (open.get(client) ?? 0) + 1;
    if (count > max) {
      answerOnSocket(
        socket,
        new ServiceError('rate_limited', {
          message: `Too many open connections from your address (at most ${max}); close some and retry.`,
          retryAfterSeconds: 1,
        }),
      );
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
}
