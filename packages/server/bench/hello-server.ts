// Baselines A and A′: bare Fastify. GET / → {hello: 'world'}. GET /same-bytes → the answer PUT there
// beforehand (set-up, not measured): the same JSON body, serialized per request, and the same headers as
// the service's answer it copies, after the same SHA-256 of the request's bearer key the service's
// authentication makes — the work of a keyed GET answered from memory, with none of our overhead.
// Started by run.ts in its own process.
import { createHash } from 'node:crypto';
import Fastify from 'fastify';

interface SameBytes {
  headers: Record<string, string>;
  body: unknown;
}

const port = Number(process.env.PORT);
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

let same: SameBytes = { headers: {}, body: {} };
app.put('/same-bytes', async (request) => {
  same = request.body as SameBytes;
  return { ok: true };
});
app.get('/same-bytes', async (request, reply) => {
  const key = request.headers.authorization?.slice('Bearer '.length) ?? '';
  createHash('sha256').update(key).digest('hex');
  reply.headers(same.headers);
  return same.body;
});

process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.once('SIGINT', () => void app.close().then(() => process.exit(0)));
await app.listen({ port, host: '127.0.0.1' });
