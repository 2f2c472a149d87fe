// A merchant's webhook receiver on a loopback port, under the test's control: it records every request
// (raw body and headers, as a merchant's server would verify them) and answers as told — 200, another
// status, fail the first N times, never answer, or be down altogether.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  /** The request's path: endpoints told apart on one receiver. */
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: the event as JSON
  event: any;
  body: string;
  headers: Record<string, string>;
  /** When it was answered (Date.now()). */
  at: number;
  /** When the request came in, before its body was read. */
  startedAt: number;
}

export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number }
  /** Answers `status` (default 500) to the first `times` requests (after `ms`, if given), then 200. */
  | { kind: 'fail-first'; times: number; status?: number; ms?: number }
  /** Never answers (the request hangs until the sender gives up). */
  | { kind: 'hang' }
  /** Answers 200 after `ms`. */
  | { kind: 'slow'; ms: number };

export class Receiver {
  readonly received: Received[] = [];
  /** Every request, answered or not, in arrival order. */
  requests = 0;
  behaviour: Behaviour = { kind: 'ok' };
  /** Behaviours of particular paths, over `behaviour`. */
  readonly byPath = new Map<string, Behaviour>();
  /** Requests in progress, by path; and each request that came while another to its path was. */
  private readonly inFlight = new Map<string, number>();
  readonly overlaps: { path: string; at: number }[] = [];
  private server: http.Server | undefined;
  private hanging = new Set<http.ServerResponse>();
  port = 0;

  static async start(behaviour: Behaviour = { kind: 'ok' }): Promise<Receiver> {
    const receiver = new Receiver();
    receiver.behaviour = behaviour;
    await receiver.listen(0);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Listens (again) on `port`, 0 for any free one. */
  async listen(port = this.port): Promise<void> {
    const server = http.createServer((req, res) => {
      const startedAt = Date.now();
      const path = req.url ?? '';
      const busy = this.inFlight.get(path) ?? 0;
      if (busy > 0) this.overlaps.push({ path, at: startedAt });
      this.inFlight.set(path, busy + 1);
      // Answered, or the connection dropped (the sender's process killed): the request is over.
      res.once('close', () => this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1));
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8'), startedAt));
    });
    server.keepAliveTimeout = 30_000;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection: deliveries now find the port closed. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  close(): Promise<void> {
    return this.down();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: string, startedAt: number) {
    this.requests++;
    const number = this.requests;
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
    );
    const b = this.byPath.get(req.url ?? '') ?? this.behaviour;
    const record = () => {
      let event: unknown;
      try {
        event = JSON.parse(body);
      } catch {
        event = undefined;
      }
      this.received.push({
        id: headers['webhook-id'] ?? '',
        path: req.url ?? '',
        event,
        body,
        headers,
        at: Date.now(),
        startedAt,
      });
    };
    switch (b.kind) {
      case 'ok':
        record();
        res.writeHead(200).end('ok');
        return;
      case 'status':
        res.writeHead(b.status).end();
        return;
      case 'fail-first':
        if (number <= b.times) {
          setTimeout(() => res.writeHead(b.status ?? 500).end('not yet'), b.ms ?? 0);
          return;
        }
        record();
        res.writeHead(200).end('ok');
        return;
      case 'hang':
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      case 'slow':
        setTimeout(() => {
          record();
          res.writeHead(200).end('ok');
        }, b.ms);
        return;
    }
  }

  /** The requests answered at one path, in arrival order. */
  ofPath(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** The events received of one type, in arrival order. */
  ofType(type: string): Received[] {
    return this.received.filter((r) => r.event?.type === type);
  }
}
