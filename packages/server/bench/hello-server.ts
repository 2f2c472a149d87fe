// Baseline A: bare Fastify, GET / → {hello: 'world'}. Started by run.ts in its own process.
import Fastify from 'fastify';

const port = Number(process.env.PORT);
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.once('SIGINT', () => void app.close().then(() => process.exit(0)));
await app.listen({ port, host: '127.0.0.1' });
