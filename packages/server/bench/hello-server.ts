// Baselines A and A′: bare Fastify. GET / → {hello: 'world'}; GET /same-bytes → the service's answer to a
// session GET, from memory, after the same key hash (bench/same-bytes.ts). Started by run.ts in its own
// process.
import Fastify from 'fastify';
import { registerSameBytes } from './same-bytes.ts';

const port = Number(process.env.PORT);
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
registerSameBytes(app, '/same-bytes');

process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.once('SIGINT', () => void app.close().then(() => process.exit(0)));
await app.listen({ port, host: '127.0.0.1' });
