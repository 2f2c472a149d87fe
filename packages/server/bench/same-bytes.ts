// A keyed GET answered from memory with the service's own bytes: the work of a cached session read with
// none of our overhead (docs/benchmarks.md, "Baselines that do the same work"). PUT /bench/same-bytes
// (set-up, not measured) stores the body and headers of one of the service's answers; GET `path` hashes
// the request's bearer key with SHA-256 by the same call as the service's authentication (src/ids.ts),
// and answers them, the body serialized per request. Mounted by hello-server.ts and reference-server.ts.
import { hash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

interface SameBytes {
  headers: Record<string, string>;
  body: unknown;
}

export function registerSameBytes(app: FastifyInstance, path: string): void {
  let same: SameBytes = { headers: {}, body: {} };
  app.put('/bench/same-bytes', async (request) => {
    same = request.body as SameBytes;
    return { ok: true };
  });
  app.get(path, async (request, reply) => {
    const key = request.headers.authorization?.slice('Bearer '.length) ?? '';
    hash('sha256', key, 'hex');
    reply.headers(same.headers);
    return same.body;
  });
}
